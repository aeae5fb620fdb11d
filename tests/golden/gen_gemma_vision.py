#!/usr/bin/env python3
"""Gemma-3's image features as transformers 5.23 computes them
(Gemma3Model.get_image_features: the SigLIP vision tower, then Gemma3MultiModalProjector's average
pooling, (1 + w) RMSNorm and projection), the input of prompt enhancement with an image (ltx-core's
enhance_i2v), fp32 on the CPU, for two checkpoints:
  - the embedded tiny Gemma (weights/tiny/gemma, Google's layout: vision_tower.*, 28 px, one layer,
    a 2 x 2 patch grid pooled to 4 tokens, i.e. no pooling at all);
  - a small one made here (tests/golden/data/gemma_vision_tiny/, transformers' own save layout under
    model.*): 56 px in 14 px patches, two layers of 32 with 4 heads, the 4 x 4 grid pooled 2 x 2
    to 4 tokens, every tensor random (LayerNorm gains and biases, the projector's norm and matrix,
    which transformers initialises to zero).
Then the language model with the tiny image in its prompt (Gemma3Model.forward: the image tokens'
embeddings replaced by the features, token_type_ids making each image block attend to itself both
ways), as ltx-core's _enhance runs it for enhance_i2v: the prompt's last final-norm hidden state,
and greedy generate after left padding to a multiple of 8 (ltx-core 400fd31).
Writes tests/golden/data/gemma_vision.safetensors:
  <name>.pixels F32 [3, S, S]      normalised pixels (what Gemma3ImageProcessor hands the model)
  <name>.features F32 [T, D]       get_image_features(...).pooler_output[0]
for name in tiny, small;
  lm.ids I64 [n]                   BOS twice, text, <start_of_image>, 4 image tokens, <end_of_image>, text
  lm.hidden_last F32 [D]           model.model(ids, pixel_values=tiny.pixels, token_type_ids).last_hidden_state[0, -1]
  lm.generated I64 [m]             generate(do_sample=False, 8 new tokens) on the padded prompt
Deterministic.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import torchaudio_stub  # noqa: E402,F401
import torch  # noqa: E402
from transformers import Gemma3Config, Gemma3ForConditionalGeneration  # noqa: E402
from transformers.utils import logging as hf_logging  # noqa: E402

from st_write import save  # noqa: E402

SEED = 1128
TINY_DIR = os.path.join(ROOT, "weights", "tiny", "gemma")
SMALL_DIR = os.path.join(HERE, "data", "gemma_vision_tiny")
SMALL_TEXT = dict(head_dim=8, hidden_size=32, intermediate_size=64, model_type="gemma3_text", num_attention_heads=4,
                  num_hidden_layers=1, num_key_value_heads=2, query_pre_attn_scalar=8, vocab_size=64,
                  sliding_window=8, pad_token_id=0, bos_token_id=2, eos_token_id=1)
SMALL_VISION = dict(hidden_size=32, image_size=56, intermediate_size=64, model_type="siglip_vision_model",
                    num_attention_heads=4, num_hidden_layers=2, patch_size=14, vision_use_head=False,
                    layer_norm_eps=1e-6)


def small_model():
    config = Gemma3Config(text_config=SMALL_TEXT, vision_config=SMALL_VISION, mm_tokens_per_image=4,
                          boi_token_index=61, eoi_token_index=62, image_token_index=63)
    model = Gemma3ForConditionalGeneration(config).eval()
    g = torch.Generator().manual_seed(SEED)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if "vision_tower" in name or "multi_modal_projector" in name:
                if name.endswith("layer_norm1.weight") or name.endswith("layer_norm2.weight") or \
                        name.endswith("post_layernorm.weight"):
                    p.copy_(1.0 + 0.2 * torch.randn(p.shape, generator=g))
                else:
                    p.copy_(0.2 * torch.randn(p.shape, generator=g))
    model.save_pretrained(SMALL_DIR, safe_serialization=True)
    return model


def features(model, size, g):
    px = torch.randn((1, 3, size, size), generator=g)
    with torch.no_grad():
        out = model.model.get_image_features(pixel_values=px).pooler_output[0]
    return px[0], out.to(torch.float32)


def lm_golden(model, T):
    """The tiny Gemma with its image in the prompt (see the docstring)."""
    from transformers import AutoTokenizer
    tok = AutoTokenizer.from_pretrained(TINY_DIR)
    cfg = model.config
    text = lambda s: tok(s, add_special_tokens=False).input_ids  # noqa: E731
    ids = ([2, 2, 5] + text("user\nDescribe the scene in detail please.\n\n") + [cfg.boi_token_index]
           + [cfg.image_token_index] * cfg.mm_tokens_per_image + [cfg.eoi_token_index]
           + text("\n\nUser Raw Input Prompt: a red ball.") + [6, 7, 5] + text("model\n"))
    ids = torch.tensor([ids])
    tt = (ids == cfg.image_token_index).long()
    px = T["tiny.pixels"][None]
    with torch.no_grad():
        h = model.model(input_ids=ids, pixel_values=px, token_type_ids=tt).last_hidden_state[0, -1]
        causal = model.model(input_ids=ids, pixel_values=px).last_hidden_state[0, -1]
        assert (h - causal).norm() / h.norm() > 1e-3, "the image block's two-way attention changed nothing"
        pad = (8 - ids.shape[1] % 8) % 8
        pids = torch.cat([torch.zeros((1, pad), dtype=ids.dtype), ids], 1)
        pmask = torch.cat([torch.zeros((1, pad), dtype=ids.dtype), torch.ones_like(ids)], 1)
        ptt = torch.cat([torch.zeros((1, pad), dtype=ids.dtype), tt], 1)
        out = model.generate(input_ids=pids, attention_mask=pmask, token_type_ids=ptt, pixel_values=px,
                             do_sample=False, max_new_tokens=8)
    T["lm.ids"] = ids[0]
    T["lm.hidden_last"] = h.to(torch.float32)
    T["lm.generated"] = out[0, pids.shape[1]:].to(torch.int64)
    print(f"lm: {ids.shape[1]} ids (+{pad} padding), two-way image block moves the last state by "
          f"{float((h - causal).norm() / h.norm()):.3g}; generated {T['lm.generated'].tolist()}")


def main():
    torch.manual_seed(SEED)
    torch.set_num_threads(1)
    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    g = torch.Generator().manual_seed(SEED + 1)
    T = {}
    tiny = Gemma3ForConditionalGeneration.from_pretrained(TINY_DIR, dtype=torch.float32).eval()
    T["tiny.pixels"], T["tiny.features"] = features(tiny, tiny.config.vision_config.image_size, g)
    lm_golden(tiny, T)
    small = small_model()
    T["small.pixels"], T["small.features"] = features(small, SMALL_VISION["image_size"], g)
    save(T, os.path.join(HERE, "data", "gemma_vision.safetensors"),
         {"generator": "tests/golden/gen_gemma_vision.py", "reference": "transformers 5.23 get_image_features"})
    for k, v in T.items():
        print(f"  {k:16s} {list(v.shape)} rms {v.double().pow(2).mean().sqrt():.4f}")
    print("saved", sorted(os.listdir(SMALL_DIR)))


if __name__ == "__main__":
    main()
