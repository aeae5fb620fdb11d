#!/usr/bin/env python3
"""Text to prompt contexts, as ltx-core 1.0.0 computes it for the embedded tiny model, both LTX
versions: LTXVGemmaTokenizer (1024 tokens, left padding) over the tiny tokenizer, the embedded
2-layer Gemma-3 loaded by transformers from Google's multimodal layout (weights/tiny/gemma), called
as ltx-core calls it (model.model(..., output_hidden_states=True), one prompt per call), then
EmbeddingsProcessor.process_hidden_states with the tiny checkpoint's text projection and
connectors (built as gen_connector_goldens.py builds them). The prompt and ltx-pipelines' default
negative prompt, fp32 CPU.

Writes tests/golden/data/text_<v>.safetensors:
  input.prompt U8, input.negative U8                  the two texts (UTF-8)
  input.ids I64 [2, 1024], input.mask I64 [2, 1024]   (0: the prompt, 1: the negative prompt)
  video.encoding, audio.encoding F32 [2, 1024, dim]   the connectors' outputs
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
from transformers import Gemma3ForConditionalGeneration  # noqa: E402
from transformers.utils import logging as hf_logging  # noqa: E402

from gen_connector_goldens import build  # noqa: E402
from ltx_core.text_encoders.gemma.tokenizer import LTXVGemmaTokenizer  # noqa: E402
from ltx_pipelines.utils.constants import DEFAULT_NEGATIVE_PROMPT  # noqa: E402
from st_write import save  # noqa: E402

GEMMA_DIR = os.path.join(ROOT, "weights", "tiny", "gemma")
PROMPT = "A cat walks across a neon street at night, rain falls gently. 東京 🎥"
MAX_LEN = 1024


def gemma_hidden(prompts):
    """ltx-core 1.0.0's text encoder on the embedded tiny Gemma: ids [n, 1024], masks, and per prompt
    the tuple of hidden states (one prompt per call, as LTXVGemmaTextEncoderModel encodes)."""
    hf_logging.disable_progress_bar()
    gemma, info = Gemma3ForConditionalGeneration.from_pretrained(GEMMA_DIR, dtype=torch.float32,
                                                                 output_loading_info=True)
    gemma.eval()
    # Google's layout must load as is: nothing missing (a silently random tensor), nothing left over
    assert not any(info[k] for k in ("missing_keys", "unexpected_keys", "mismatched_keys")), info
    tok = LTXVGemmaTokenizer(GEMMA_DIR, max_length=MAX_LEN)
    rows = [tok.tokenize_with_weights(p)["gemma"] for p in prompts]
    ids = torch.tensor([[t for t, _ in r] for r in rows], dtype=torch.int64)
    mask = torch.tensor([[w for _, w in r] for r in rows], dtype=torch.int64)
    hidden = []
    with torch.no_grad():
        for b in range(len(prompts)):
            out = gemma.model(input_ids=ids[b:b + 1], attention_mask=mask[b:b + 1], output_hidden_states=True)
            hidden.append(out.hidden_states)
    return ids, mask, hidden


def main():
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    ids, mask, hidden = gemma_hidden((PROMPT, DEFAULT_NEGATIVE_PROMPT))
    for version in ("2.0", "2.3"):
        proc = build(version)
        enc_v, enc_a = [], []
        with torch.no_grad():
            for b in range(2):
                out = proc.process_hidden_states(hidden[b], mask[b:b + 1], padding_side="left")
                enc_v.append(out.video_encoding)
                enc_a.append(out.audio_encoding)
        tensors = {"input.prompt": torch.frombuffer(bytearray(PROMPT.encode()), dtype=torch.uint8),
                   "input.negative": torch.frombuffer(bytearray(DEFAULT_NEGATIVE_PROMPT.encode()), dtype=torch.uint8),
                   "input.ids": ids, "input.mask": mask,
                   "video.encoding": torch.cat(enc_v).float().contiguous(),
                   "audio.encoding": torch.cat(enc_a).float().contiguous()}
        path = os.path.join(HERE, "data", f"text_{version}.safetensors")
        save(tensors, path, metadata={"generator": "tests/golden/gen_text_goldens.py",
                                      "checkpoint": f"weights/tiny/ltx2-tiny-{version}.safetensors",
                                      "text_encoder": "weights/tiny/gemma",
                                      "prompts": json.dumps([PROMPT, "ltx_pipelines DEFAULT_NEGATIVE_PROMPT"]),
                                      "real_tokens": json.dumps(mask.sum(1).tolist())})
        print(f"{path}: {os.path.getsize(path)} bytes, real tokens {mask.sum(1).tolist()}")


if __name__ == "__main__":
    main()
