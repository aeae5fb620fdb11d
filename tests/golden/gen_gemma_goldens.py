#!/usr/bin/env python3
"""A tiny Gemma-3 text encoder and its hidden states, made by transformers' Gemma-3 classes the way
ltx-core 1.0.0 builds and calls them (Gemma3ForConditionalGeneration from a Gemma3Config, then
model.model(input_ids, attention_mask, output_hidden_states=True): the LM head is never run).

The tiny config keeps every structural feature of the 12B: 6 layers, sliding pattern 3 (local,
local, global, ...), a window of 8 that bites at 64 tokens, grouped-query attention (4 query heads,
2 key/value heads), head_dim 16 != hidden/heads, query_pre_attn_scalar 24 != head_dim, linear RoPE
scaling x8 on global layers (theta 1e6) and theta 1e4 on local ones, GELU-tanh gated MLP, an
embedding table larger than the tokenizer (as 262208 > 262144). Norm weights are random (the
(1 + w) form must matter). fp32, CPU, seeded.

A second, smaller model is the embedded default text encoder: hidden 32 and 2 layers (one local,
one global), so its 3 hidden states feed the tiny LTX checkpoints' text projections (32 x 3).

Writes:
  weights/tiny/gemma-6l/config.json, model-0000{1,2}-of-00002.safetensors,
  model.safetensors.index.json   the golden checkpoint as Google ships Gemma-3 (multimodal layout:
                                 language_model.model.*, a tiny vision tower and projector beside it)
  weights/tiny/gemma/config.json, model-*.safetensors, index   the embedded 2-layer encoder (beside the
                                 tiny tokenizer, as Google's directory holds both)
  tests/golden/data/gemma_tiny.safetensors (the 6-layer model):
    input.ids I64 [B,S], input.mask I64 [B,S]   two prompts of the tiny tokenizer, left-padded
    hidden.<i> F32 [B,S,D] for i in 0..L        model.model's hidden_states (0: scaled embeddings,
                                                 L: after the final norm)
Deterministic.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import torchaudio_stub  # noqa: E402,F401  (before ltx_core)
import torch  # noqa: E402
from transformers import Gemma3Config, Gemma3ForConditionalGeneration  # noqa: E402

from ltx_core.text_encoders.gemma.tokenizer import LTXVGemmaTokenizer  # noqa: E402
from st_write import save  # noqa: E402

SEED = 1127
SEQ = 64
TOKENIZER_DIR = os.path.join(ROOT, "weights", "tiny", "gemma")
GOLDEN = os.path.join(HERE, "data", "gemma_tiny.safetensors")
PROMPTS = ("A cat walks slowly across a neon street at night, rain falls gently.",
           "東京の夜景 🎥 close-up")

TEXT_CONFIG = dict(
    attention_bias=False, attention_dropout=0.0, attn_logit_softcapping=None, final_logit_softcapping=None,
    head_dim=16, hidden_activation="gelu_pytorch_tanh", hidden_size=32, intermediate_size=64,
    max_position_embeddings=4096, model_type="gemma3_text", num_attention_heads=4, num_hidden_layers=6,
    num_key_value_heads=2, query_pre_attn_scalar=24, rms_norm_eps=1e-6, rope_local_base_freq=10000.0,
    rope_scaling={"factor": 8.0, "rope_type": "linear"}, rope_theta=1000000.0, sliding_window=8,
    sliding_window_pattern=3, vocab_size=1088, pad_token_id=0, bos_token_id=2, eos_token_id=1)
VISION_CONFIG = dict(hidden_size=16, image_size=28, intermediate_size=32, model_type="siglip_vision_model",
                     num_attention_heads=2, num_hidden_layers=1, patch_size=14, vision_use_head=False)
CONFIG = dict(architectures=["Gemma3ForConditionalGeneration"], boi_token_index=1085, eoi_token_index=1086,
              eos_token_id=[1, 106], image_token_index=1087, mm_tokens_per_image=4, model_type="gemma3",
              text_config=TEXT_CONFIG, vision_config=VISION_CONFIG, torch_dtype="float32")
SHARDS = 2
# The embedded encoder: the golden's config with 2 layers (local, global).
EMBEDDED_TEXT = dict(TEXT_CONFIG, num_hidden_layers=2, sliding_window_pattern=2)


def make_model(config, seed):
    """A Gemma3ForConditionalGeneration with seeded random weights (norm weights too)."""
    torch.manual_seed(seed)
    model = Gemma3ForConditionalGeneration(Gemma3Config.from_dict(config)).eval()
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            scale = 0.3 if "norm" in name else (1.0 if "embed_tokens" in name else 0.15)
            p.copy_(torch.randn(p.shape, generator=g) * scale)
    return model


def save_checkpoint(model, config, out_dir):
    """Google's multimodal layout, sharded with an index, and its config.json."""
    sd = {}
    for k, v in model.state_dict().items():
        if k.startswith("lm_head."):
            continue  # tied to the embeddings; Google's files do not store it
        k = k.replace("model.language_model.", "language_model.model.")
        k = k.replace("model.vision_tower.", "vision_tower.vision_model.").replace("model.multi_modal_projector.",
                                                                                     "multi_modal_projector.")
        sd[k] = v.contiguous()
    keys = sorted(sd)
    per = (len(keys) + SHARDS - 1) // SHARDS
    weight_map = {}
    os.makedirs(out_dir, exist_ok=True)
    for s in range(SHARDS):
        name = f"model-{s + 1:05d}-of-{SHARDS:05d}.safetensors"
        part = {k: sd[k] for k in keys[s * per:(s + 1) * per]}
        save(part, os.path.join(out_dir, name), metadata={"format": "pt"})
        weight_map.update({k: name for k in part})
    total = sum(v.numel() * v.element_size() for v in sd.values())
    with open(os.path.join(out_dir, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f, indent=2, sort_keys=True)
        f.write("\n")
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")


def main():
    torch.set_num_threads(1)
    embedded = dict(CONFIG, text_config=EMBEDDED_TEXT)
    save_checkpoint(make_model(embedded, SEED + 1), embedded, TOKENIZER_DIR)

    model = make_model(CONFIG, SEED)
    tok = LTXVGemmaTokenizer(TOKENIZER_DIR, max_length=SEQ)
    rows = [tok.tokenize_with_weights(p)["gemma"] for p in PROMPTS]
    ids = torch.tensor([[t for t, _ in r] for r in rows], dtype=torch.int64)
    mask = torch.tensor([[w for _, w in r] for r in rows], dtype=torch.int64)
    with torch.no_grad():
        out = model.model(input_ids=ids, attention_mask=mask, output_hidden_states=True)
        # ltx-core 1.0.0 encodes one prompt per call: the batch must not change a row
        for b in range(len(PROMPTS)):
            one = model.model(input_ids=ids[b:b + 1], attention_mask=mask[b:b + 1], output_hidden_states=True)
            for h, h1 in zip(out.hidden_states, one.hidden_states):
                assert torch.equal(h[b:b + 1], h1), "batching changed a row"
    hidden = out.hidden_states
    assert len(hidden) == TEXT_CONFIG["num_hidden_layers"] + 1

    save_checkpoint(model, CONFIG, os.path.join(ROOT, "weights", "tiny", "gemma-6l"))

    tensors = {"input.ids": ids, "input.mask": mask}
    for i, h in enumerate(hidden):
        tensors[f"hidden.{i}"] = h.float().contiguous()
    save(tensors, GOLDEN, metadata={"generator": "tests/golden/gen_gemma_goldens.py", "layers": str(len(hidden) - 1),
                                    "attn_implementation": str(model.config._attn_implementation),
                                    "prompts": json.dumps(PROMPTS)})
    print(f"{GOLDEN}: {os.path.getsize(GOLDEN)} bytes; attention {model.config._attn_implementation}; "
          f"real tokens {mask.sum(1).tolist()}")


if __name__ == "__main__":
    main()
