"""Prompt hidden states for the embedded tiny model (what Gemma-3 would hand the connectors).

The tiny checkpoints' text projections take Gemma dims D=32 x L=3 layers (see
gen_connector_goldens.py). Real prompts need Gemma, which we cannot ship, so `ltx2 generate` with
the embedded model uses these fixed, seeded stand-ins: a "positive" prompt of 23 tokens and a
"negative" one of 11, left-padded to 128 (the Gemma tokenizer pads left to a multiple of the 128
connector registers), with Gemma-like per-layer scales. Written to
weights/tiny/prompt_embeds_{positive,negative}.safetensors: "hidden_states" [1, 128, 32, 3] f32,
"attention_mask" [1, 128] int64. Deterministic.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import torch  # noqa: E402

from st_write import save  # noqa: E402

SEED = 424242
GEMMA_D, GEMMA_L, SEQ = 32, 3, 128
PROMPTS = (("positive", 23), ("negative", 11))


def make(g, n):
    layers = []
    for li in range(GEMMA_L):
        scale, off = (1.0, 0.0) if li == 0 else (4.0 * li, 0.5 * li)
        layers.append(torch.randn(1, SEQ, GEMMA_D, generator=g) * scale + off)
    mask = torch.zeros(1, SEQ, dtype=torch.int64)
    mask[0, SEQ - n:] = 1
    hidden = torch.stack(layers, dim=-1) * mask[..., None, None]
    return hidden.contiguous(), mask


def main():
    g = torch.Generator().manual_seed(SEED)
    for name, n in PROMPTS:
        hidden, mask = make(g, n)
        path = os.path.join(ROOT, "weights", "tiny", f"prompt_embeds_{name}.safetensors")
        save({"hidden_states": hidden, "attention_mask": mask}, path,
             metadata={"generator": "tests/golden/gen_prompt_embeds.py", "tokens": str(n),
                       "layout": "hidden_states [B, S, D, L] (layer axis last), attention_mask [B, S] left-padded"})
        print(f"{path}: {os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
