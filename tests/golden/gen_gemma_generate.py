#!/usr/bin/env python3
"""Greedy text generation with the embedded tiny Gemma-3 (weights/tiny/gemma, Google's multimodal
layout, fp32 CPU), as transformers' GenerationMixin.generate runs it (do_sample=False): the reference
for ltx2_gemma_generate's LM head (logits = final-norm hidden state x the tied embedding table) and
its greedy loop, the core of --enhance-prompt (issue #13 item 9; ltx-pipelines samples with
temperature 0.7 and torch's generator, which no C engine reproduces; greedy is exact).

Writes tests/golden/data/gemma_generate.safetensors:
  prompt.<i> I64 [n_i]          the prompt ids (the tiny tokenizer's, BOS first; the last one in the
                                Gemma-3 chat template with its special turn tokens)
  generated.<i> I64 [m_i]       the new ids, stopping at an EOS id (1 or 106) or after MAX_NEW, with the
                                prompt left-padded to a multiple of 8 with the pad id (masked) as
                                ltx-core's _pad_inputs_for_attention_alignment (400fd31) pads it
  logits.0 F32 [vocab]          the logits after prompt 0, unpadded (model(ids).logits[0, -1])
  logits_padded.1 F32 [vocab]   the logits after prompt 1 left-padded (3 pads), with generate's
                                positions cumsum(mask) - 1 (padding at 1)
  text.<i> U8                   generated.<i> decoded (skip_special_tokens=True), UTF-8
  decode.ids I64, decode.skip U8, decode.keep U8
                                ids with specials, CJK, emoji and byte-fallback runs (valid and not),
                                decoded with and without skip_special_tokens
Deterministic.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import torchaudio_stub  # noqa: E402,F401  (as gen_text_goldens: transformers imports torchaudio)
import torch  # noqa: E402
from transformers import AutoTokenizer, Gemma3ForConditionalGeneration  # noqa: E402
from transformers.utils import logging as hf_logging  # noqa: E402

from st_write import save  # noqa: E402

GEMMA_DIR = os.path.join(ROOT, "weights", "tiny", "gemma")
MAX_NEW = 24
DECODE_TEXT = "東京 🎥 naïve\nA cat walks"
ALIGN, PAD_ID = 8, 0  # ltx-core's _pad_inputs_for_attention_alignment (alignment 8, Gemma's pad id)
PROMPTS = ("A cat walks across a neon street at night.",
           "Slow dolly shot of a lighthouse, waves, golden hour; 東京 🎥",
           "<start_of_turn>user\nDescribe a calm lake at dawn.<end_of_turn>\n<start_of_turn>model\n")


def main():
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    hf_logging.disable_progress_bar()
    model = Gemma3ForConditionalGeneration.from_pretrained(GEMMA_DIR, dtype=torch.float32).eval()
    tok = AutoTokenizer.from_pretrained(GEMMA_DIR)
    T = {}
    with torch.no_grad():
        for i, p in enumerate(PROMPTS):
            ids = tok(p, return_tensors="pt").input_ids
            assert ids[0, 0].item() == tok.bos_token_id
            pad = (ALIGN - ids.shape[1] % ALIGN) % ALIGN
            padded = torch.cat([torch.full((1, pad), PAD_ID, dtype=ids.dtype), ids], dim=1)
            mask = torch.cat([torch.zeros((1, pad), dtype=ids.dtype), torch.ones_like(ids)], dim=1)
            out = model.generate(padded, attention_mask=mask, do_sample=False, max_new_tokens=MAX_NEW,
                                 eos_token_id=[1, 106], pad_token_id=PAD_ID)
            T[f"prompt.{i}"] = ids[0].to(torch.int64)
            T[f"generated.{i}"] = out[0, padded.shape[1]:].to(torch.int64)
            if i == 0:
                T["logits.0"] = model(input_ids=ids).logits[0, -1].to(torch.float32)
            T[f"text.{i}"] = torch.tensor(list(tok.decode(T[f"generated.{i}"].tolist(),
                                                           skip_special_tokens=True).encode("utf-8")), dtype=torch.uint8)
            if i == 1:  # the padded prefill generate runs: mask-aware positions, padding at 1
                pos = (mask.cumsum(-1) - 1).masked_fill(mask == 0, 1)
                T["logits_padded.1"] = model(input_ids=padded, attention_mask=mask,
                                             position_ids=pos).logits[0, -1].to(torch.float32)
    # decoding alone: specials (skipped or kept), word marks, CJK, emoji, byte-fallback runs valid and not
    byte = tok.convert_tokens_to_ids
    ids = ([2, 5] + tok(DECODE_TEXT, add_special_tokens=False).input_ids + [6, 7]
           + [byte(b) for b in ("<0xF0>", "<0x9F>", "<0x8E>", "<0xA5>")] + [byte("<0xF0>"), byte("<0x9F>"), 8, 1, 0, 3])
    T["decode.ids"] = torch.tensor(ids, dtype=torch.int64)
    for k, skip in (("skip", True), ("keep", False)):
        T[f"decode.{k}"] = torch.tensor(list(tok.decode(ids, skip_special_tokens=skip).encode("utf-8")),
                                        dtype=torch.uint8)
    path = os.path.join(HERE, "data", "gemma_generate.safetensors")
    save(T, path, {"generator": "tests/golden/gen_gemma_generate.py", "max_new_tokens": str(MAX_NEW),
                   "eos_token_id": "[1, 106]", "decoding": "greedy (do_sample=False)",
                   "padding": f"left to a multiple of {ALIGN} with id {PAD_ID}, masked"})
    for k, v in T.items():
        print(f"  {k:14s} {list(v.shape)} {v[:12].tolist() if v.dtype == torch.int64 else ''}"
              f"{repr(bytes(v.tolist()).decode('utf-8')) if v.dtype == torch.uint8 else ''}")


if __name__ == "__main__":
    main()
