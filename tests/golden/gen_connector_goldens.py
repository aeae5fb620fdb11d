#!/usr/bin/env python3
"""Step-by-step goldens of the LTX-2 / LTX-2.3 text path after Gemma, made by ltx-core 1.0.0:
feature extractor (V1 per-layer masked mean/range x8 + aggregate_embed for 2.0, V2 per-token RMS
x sqrt(out/D) + video/audio aggregate_embed for 2.3) and the video/audio Embeddings1DConnector
(learnable registers, 1-D RoPE, blocks, final RMS norm), through EmbeddingsProcessor.
process_hidden_states exactly as the pipeline calls it.

The tiny checkpoints use Gemma dims D=32 x L=3 layers (ltx-core hard-codes 3840 x 49 in
_create_feature_extractor, so the feature extractor is built here with the tiny sizes from the
same classes; the connectors come from ltx-core's configurators). Weights are upcast from bf16 to
fp32 and run in fp32 on the CPU.

ltx-core's register replacement only works for batch 1 (it boolean-indexes with the squeezed
mask), so each case runs separately and the results are stacked along the batch axis:
  case 0: left padding (the pipeline's tokenizer setting), 37 real tokens of 128
  case 1: right padding (padding_side="right"), 90 real tokens: exposes the flipped-mask
          placement of the registers
Padded positions hold large garbage, which must not leak into anything.
Names:
  input.hidden [B,S,D,L], input.mask [B,S] (1 = token, f32)
  feature.normed [B,S,D*L]      normalised, flattened (index d*L + l), padding zeroed
  feature.video / feature.audio  the projections (V1: one projection feeds both)
  <m>_connector.registers.out    hidden states after register replacement (block 0 input)
  <m>_connector.transformer_1d_blocks.<j>.out
  <m>.encoding, mask             EmbeddingsProcessorOutput (mask as f32)
Written to tests/golden/data/connectors_<v>.safetensors. Deterministic.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import torchaudio_stub  # noqa: E402,F401  (before ltx_core)

import torch  # noqa: E402
from safetensors import safe_open  # noqa: E402

from st_write import save  # noqa: E402

from ltx_core.text_encoders.gemma.embeddings_connector import (  # noqa: E402
    AudioEmbeddings1DConnectorConfigurator,
    Embeddings1DConnectorConfigurator,
)
from ltx_core.text_encoders.gemma.embeddings_processor import EmbeddingsProcessor  # noqa: E402
from ltx_core.text_encoders.gemma import feature_extractor as fe_mod  # noqa: E402
from ltx_core.text_encoders.gemma.feature_extractor import FeatureExtractorV1, FeatureExtractorV2  # noqa: E402

SEED = 5531
GEMMA_D, GEMMA_L = 32, 3
SEQ = 128  # a multiple of the 128 learnable registers (asserted by ltx-core)
CASES = (("left", 37), ("right", 90))
KEY_MAP = (
    ("text_embedding_projection.aggregate_embed.", "feature_extractor.aggregate_embed."),
    ("text_embedding_projection.video_aggregate_embed.", "feature_extractor.video_aggregate_embed."),
    ("text_embedding_projection.audio_aggregate_embed.", "feature_extractor.audio_aggregate_embed."),
    ("model.diffusion_model.video_embeddings_connector.", "video_connector."),
    ("model.diffusion_model.audio_embeddings_connector.", "audio_connector."),
)


def build(version):
    path = os.path.join(ROOT, "weights", "tiny", f"ltx2-tiny-{version}.safetensors")
    sd = {}
    with safe_open(path, "pt") as f:
        config = json.loads(f.metadata()["config"])
        for k in f.keys():
            for src, dst in KEY_MAP:
                if k.startswith(src):
                    sd[dst + k[len(src):]] = f.get_tensor(k).float()
    tc = config["transformer"]
    flat = GEMMA_D * GEMMA_L
    if "caption_proj_before_connector" in tc:
        dv = tc["num_attention_heads"] * tc["attention_head_dim"]
        da = tc["audio_num_attention_heads"] * tc["audio_attention_head_dim"]
        fe = FeatureExtractorV2(torch.nn.Linear(flat, dv, bias=True), GEMMA_D, torch.nn.Linear(flat, da, bias=True))
    else:
        fe = FeatureExtractorV1(torch.nn.Linear(flat, GEMMA_D, bias=False), is_av=True)
    proc = EmbeddingsProcessor(feature_extractor=fe,
                               video_connector=Embeddings1DConnectorConfigurator.from_config(config),
                               audio_connector=AudioEmbeddings1DConnectorConfigurator.from_config(config))
    proc = proc.float()
    missing, unexpected = proc.load_state_dict(sd, strict=True)
    if missing or unexpected:
        raise RuntimeError(f"{version}: missing {missing[:3]} unexpected {unexpected[:3]}")
    return proc.eval()


def make_case(g, side, n):
    # per-layer scales/offsets like Gemma's growing residual stream
    layers = []
    for li in range(GEMMA_L):
        scale, off = (1.0, 0.0) if li == 0 else (4.0 * li, 0.5 * li)
        layers.append(torch.randn(1, SEQ, GEMMA_D, generator=g) * scale + off)
    mask = torch.zeros(1, SEQ, dtype=torch.int64)
    if side == "left":
        mask[0, SEQ - n:] = 1
    else:
        mask[0, :n] = 1
    garbage = torch.randn(1, SEQ, GEMMA_D, generator=g) * 300.0
    layers = [torch.where(mask[..., None].bool(), h, garbage) for h in layers]
    return tuple(layers), mask


def record(version):
    torch.manual_seed(SEED)
    proc = build(version)
    g = torch.Generator().manual_seed(SEED + (0 if version == "2.0" else 1))
    per_case = []
    for side, n in CASES:
        hidden, mask = make_case(g, side, n)
        rec = {"input.hidden": torch.stack(hidden, dim=-1), "input.mask": mask.float()}
        hooks = []

        def fe_hook(mod, args, kwargs, output):
            enc = torch.stack(args[0], dim=-1)
            if isinstance(mod, FeatureExtractorV1):
                normed = fe_mod._norm_and_concat_padded_batch(enc, args[1].sum(dim=-1), args[2])
            else:
                normed = fe_mod.norm_and_concat_per_token_rms(enc, args[1])
            rec["feature.normed"] = normed
            rec["feature.video"] = output[0]
            rec["feature.audio"] = output[1]
        hooks.append(proc.feature_extractor.register_forward_hook(fe_hook, with_kwargs=True))
        for m in ("video", "audio"):
            conn = getattr(proc, f"{m}_connector")

            def pre(mod, args, kwargs, _m=m):
                rec[f"{_m}_connector.registers.out"] = args[0]
            hooks.append(conn.transformer_1d_blocks[0].register_forward_pre_hook(pre, with_kwargs=True))
            for j, blk in enumerate(conn.transformer_1d_blocks):
                def post(mod, args, kwargs, output, _m=m, _j=j):
                    rec[f"{_m}_connector.transformer_1d_blocks.{_j}.out"] = output
                hooks.append(blk.register_forward_hook(post, with_kwargs=True))
        with torch.no_grad():
            out = proc.process_hidden_states(hidden, mask, padding_side=side)
        for h in hooks:
            h.remove()
        rec["video.encoding"] = out.video_encoding
        rec["audio.encoding"] = out.audio_encoding
        rec["mask"] = out.attention_mask.float()
        per_case.append(rec)
    tensors = {k: torch.cat([c[k] for c in per_case], dim=0).detach().contiguous().float()
               for k in sorted(per_case[0])}
    meta = {"generator": "tests/golden/gen_connector_goldens.py",
            "checkpoint": f"weights/tiny/ltx2-tiny-{version}.safetensors",
            "reference": "ltx-core 1.0.0 EmbeddingsProcessor.process_hidden_states, fp32 CPU, batch-1 runs stacked",
            "torch": torch.__version__,
            "description": json.dumps({"gemma_dims": [GEMMA_D, GEMMA_L], "seq": SEQ,
                                       "cases": [{"padding_side": s, "tokens": n} for s, n in CASES]})}
    path = os.path.join(HERE, "data", f"connectors_{version}.safetensors")
    save(tensors, path, metadata=meta)
    n_bytes = os.path.getsize(path)
    print(f"{path}: {len(tensors)} tensors, {n_bytes} bytes")
    if n_bytes > 1 << 20:
        raise RuntimeError(f"{path} is larger than 1 MB")


def main():
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    for version in ("2.0", "2.3"):
        record(version)


if __name__ == "__main__":
    main()
