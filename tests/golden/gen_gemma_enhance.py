#!/usr/bin/env python3
"""Prompt enhancement (--enhance-prompt, issue #13 item 9) with the embedded tiny Gemma-3
(weights/tiny/gemma, fp32 CPU), as ltx-core's LTXGemmaTextEncoder._enhance runs it, pieces taken
from the installed reference where it has them:
  - the chat text: the messages of enhance_t2v (system prompt; "user prompt: {prompt}") through
    Gemma-3's chat template. The tiny tokenizer has none and Google's tokenizer_config.json cannot be
    downloaded here, so GEMMA3_CHAT_TEMPLATE below is Gemma-3's published format (the system text
    plus a blank line prefixed to the first user turn, turns trimmed, <start_of_turn>/<end_of_turn>,
    the generation prompt "<start_of_turn>model\\n");
  - the ids: Gemma3Processor(text=...) as _enhance calls it (the tokenizer adds BOS in front of the
    template's own <bos>: two BOS), then padded to a multiple of 8 with the pad id as ltx-core
    400fd31's _pad_inputs_for_attention_alignment pads: on the LEFT, masked (pad_left below; the
    pinned ltx-core 1.0.0 still pads on the right, which 400fd31 fixed: generation continued from a
    pad position);
  - greedy generate (do_sample=False: the one exact way to compare; ltx-core samples with torch's
    RNG), decode(skip_special_tokens=True), ltx-pipelines' clean_response;
  - the sampling warpers transformers applies in that order (TemperatureLogitsWarper 0.7,
    TopKLogitsWarper, TopPLogitsWarper), then softmax, on model logits and on made-up ones with ties;
  - clean_response on crafted answers (quotes, dashes, leading marks, CJK, none with a letter).

Writes tests/golden/data/gemma_enhance.safetensors (U8 tensors are UTF-8 text):
  system U8, prompt U8, chat.text U8, chat.ids I64 [n]      one enhancement request
  gen.ids I64 [m], gen.text U8                               greedy, MAX_NEW tokens, the config's stops
  warp.<i>.logits F32 [V], warp.<i>.probs F32 [V], warp.<i>.params F64 [3] (temperature, top_k, top_p)
  clean.<i>.in U8, clean.<i>.out U8
and image-to-video (enhance_i2v + generate_enhanced_prompt with tests/golden/data/i2v_image.png):
  i2v.pixels F32 [3, 28, 28]   decode_image -> resize_aspect_ratio_preserving(896) -> uint8 ->
                               Gemma3ImageProcessor (PIL backend here: torchvision is not installed)
  i2v.pixels_big F32 [3, 28, 28]   the same for data/enhance_image_big.png (written here), which the
                               first resize shrinks
  i2v.before U8, i2v.after U8  the chat text around the processor's image sequence
  i2v.ids I64 [n]              the ids: the tiny tokenizer has no image tokens (Google's has them as
                               added tokens, which cut the text), so the two halves are encoded apart
                               around <start_of_image>, mm_tokens image tokens and <end_of_image>
  i2v.gen.ids I64, i2v.gen.text U8   greedy generate with the image (pixel_values, token_type_ids)
Deterministic.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import torchaudio_stub  # noqa: E402,F401  (as gen_text_goldens: transformers imports torchaudio)
import torch  # noqa: E402
from ltx_pipelines.utils.helpers import clean_response  # noqa: E402
from transformers import AutoTokenizer, Gemma3ForConditionalGeneration, Gemma3Processor  # noqa: E402
from transformers.generation.logits_process import (LogitsProcessorList, TemperatureLogitsWarper,  # noqa: E402
                                                    TopKLogitsWarper, TopPLogitsWarper)
from transformers.utils import logging as hf_logging  # noqa: E402

from st_write import save  # noqa: E402

GEMMA_DIR = os.path.join(ROOT, "weights", "tiny", "gemma")
SYSTEM_FILE = os.path.join(ROOT, "tests", "data", "enhance_system_prompt.txt")
PROMPT = "  A cat walks across a neon street at night, rain falls gently \n"
IMAGE = os.path.join(HERE, "data", "i2v_image.png")
IMAGE_BIG = os.path.join(HERE, "data", "enhance_image_big.png")  # written here: 1300 x 1000, patterned
BIG_H, BIG_W = 1000, 1300
MAX_NEW = 16
GEMMA3_CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{%- if messages[0]['role'] == 'system' -%}"
    "{%- set first_user_prefix = messages[0]['content'] + '\n\n' -%}"
    "{%- set loop_messages = messages[1:] -%}"
    "{%- else -%}{%- set first_user_prefix = '' -%}{%- set loop_messages = messages -%}{%- endif -%}"
    "{%- for message in loop_messages -%}"
    "{%- set role = 'model' if message['role'] == 'assistant' else message['role'] -%}"
    "{{ '<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else '') }}"
    "{%- if message['content'] is string -%}{{ message['content'] | trim }}"
    "{%- else -%}{%- for item in message['content'] -%}"
    "{%- if item['type'] == 'image' -%}{{ '<start_of_image>' }}"
    "{%- elif item['type'] == 'text' -%}{{ item['text'] | trim }}{%- endif -%}"
    "{%- endfor -%}{%- endif -%}"
    "{{ '<end_of_turn>\n' }}"
    "{%- endfor -%}"
    "{%- if add_generation_prompt -%}{{ '<start_of_turn>model\n' }}{%- endif -%}")
# (temperature, top_k, top_p): ltx-core's 0.7 with Google's Gemma-3 generation_config (64, 0.95),
# with transformers' defaults (50, 1.0), top-p alone, and a narrow top-k
WARPS = ((0.7, 64, 0.95), (0.7, 50, 1.0), (0.7, 0, 0.9), (1.0, 5, 1.0), (0.7, 0, 0.5))
CLEAN = ("\n\n**\u201cA cat\u201d walks \u2014 slowly\u00a0on 2\u2032 rails\u2026",
         "  1. \u2018Rain\u2019 \u2212 falls",
         "\u300c\u6771\u4eac\u300d\u306e\u591c",
         "\U0001F3A5 \u00e9t\u00e9 \u2013 sun",
         "123 !!! ...",
         "")


def text_u8(s):
    return torch.tensor(list(s.encode("utf-8")), dtype=torch.uint8)


def pad_left(inputs, pad_id, alignment=8):
    """ltx-core 400fd31's _pad_inputs_for_attention_alignment (see the docstring)."""
    n = inputs["input_ids"].shape[1]
    pad = (alignment - n % alignment) % alignment
    for key, value in (("input_ids", pad_id), ("attention_mask", 0), ("token_type_ids", 0)):
        if key in inputs and pad:
            t = inputs[key]
            inputs[key] = torch.cat([torch.full((1, pad), value, dtype=t.dtype), t], dim=1)
    return inputs


def warped(logits, temperature, top_k, top_p):
    procs = LogitsProcessorList()
    if temperature != 1.0:
        procs.append(TemperatureLogitsWarper(temperature))
    if top_k:
        procs.append(TopKLogitsWarper(top_k=top_k))
    if top_p < 1.0:
        procs.append(TopPLogitsWarper(top_p=top_p))
    scores = procs(torch.zeros((1, 1), dtype=torch.long), logits[None].clone())
    return torch.softmax(scores, dim=-1)[0]


def i2v_golden(model, tok, system, T):
    """enhance_i2v with the tiny Gemma (see the docstring)."""
    from transformers import Gemma3ImageProcessorPil
    from ltx_pipelines.utils.media_io import decode_image, resize_aspect_ratio_preserving
    cfg = model.config
    side = cfg.vision_config.image_size
    image = resize_aspect_ratio_preserving(torch.tensor(decode_image(IMAGE)), 896).to(torch.uint8)
    proc = Gemma3ImageProcessorPil(size={"height": side, "width": side}, image_mean=[0.5] * 3, image_std=[0.5] * 3)
    pixels = proc(images=image.numpy(), return_tensors="pt").pixel_values
    messages = [{"role": "system", "content": system},
                {"role": "user", "content": [{"type": "image"}, {"type": "text", "text": f"User Raw Input Prompt: {PROMPT}."}]}]
    text = tok.apply_chat_template(messages, chat_template=GEMMA3_CHAT_TEMPLATE, tokenize=False, add_generation_prompt=True)
    seq = "\n\n<start_of_image>" + "<image_soft_token>" * cfg.mm_tokens_per_image + "<end_of_image>\n\n"
    text = text.replace("<start_of_image>", seq)  # Gemma3Processor's expansion
    before, after = text.split("<start_of_image>" + "<image_soft_token>" * cfg.mm_tokens_per_image + "<end_of_image>")
    ids = (tok(before).input_ids + [cfg.boi_token_index] + [cfg.image_token_index] * cfg.mm_tokens_per_image
           + [cfg.eoi_token_index] + tok(after, add_special_tokens=False).input_ids)
    ids = torch.tensor([ids])
    inputs = pad_left({"input_ids": ids, "attention_mask": torch.ones_like(ids),
                       "token_type_ids": (ids == cfg.image_token_index).long()}, tok.pad_token_id)
    with torch.no_grad():
        out = model.generate(**inputs, pixel_values=pixels, do_sample=False, max_new_tokens=MAX_NEW)
    gen = out[0, inputs["input_ids"].shape[1]:]
    T["i2v.pixels"] = pixels[0].to(torch.float32)
    # a large image too: the first resize then shrinks (torch's uint8 bilinear without antialiasing)
    yy, xx = torch.meshgrid(torch.arange(BIG_H, dtype=torch.float64), torch.arange(BIG_W, dtype=torch.float64),
                            indexing="ij")
    big = torch.stack([127.5 + 127.5 * torch.sin(xx / 7.0 + yy / 23.0), 127.5 + 127.5 * torch.cos(yy / 5.0),
                       (xx * 3 + yy) % 256], dim=-1).round().clamp(0, 255).to(torch.uint8)
    from PIL import Image
    Image.fromarray(big.numpy()).save(IMAGE_BIG)
    big = resize_aspect_ratio_preserving(torch.tensor(decode_image(IMAGE_BIG)), 896).to(torch.uint8)
    T["i2v.pixels_big"] = proc(images=big.numpy(), return_tensors="pt").pixel_values[0].to(torch.float32)
    T["i2v.before"], T["i2v.after"] = text_u8(before), text_u8(after)
    T["i2v.ids"] = ids[0].to(torch.int64)
    T["i2v.gen.ids"] = gen.to(torch.int64)
    T["i2v.gen.text"] = text_u8(clean_response(tok.decode(gen.tolist(), skip_special_tokens=True)))
    print(f"i2v: image {tuple(image.shape)} -> pixels {tuple(pixels.shape)}, {ids.shape[1]} ids, greedy {gen.tolist()}")


def main():
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    model = Gemma3ForConditionalGeneration.from_pretrained(GEMMA_DIR, dtype=torch.float32).eval()
    tok = AutoTokenizer.from_pretrained(GEMMA_DIR)
    # what Gemma3Processor needs of a tokenizer beyond the tiny one's (image tokens: unused by text)
    tok.boi_token, tok.eoi_token, tok.image_token = "<start_of_image>", "<end_of_image>", "<image_soft_token>"
    tok.boi_token_id = tok.image_token_id = tok.convert_tokens_to_ids("<start_of_image>")
    from transformers import Gemma3ImageProcessorPil
    processor = Gemma3Processor(image_processor=Gemma3ImageProcessorPil(), tokenizer=tok)
    system = open(SYSTEM_FILE, encoding="utf-8").read()
    messages = [{"role": "system", "content": system}, {"role": "user", "content": f"user prompt: {PROMPT}"}]
    text = tok.apply_chat_template(messages, chat_template=GEMMA3_CHAT_TEMPLATE, tokenize=False,
                                   add_generation_prompt=True)
    inputs = processor(text=text, return_tensors="pt")
    ids = inputs.input_ids
    assert ids[0, 0].item() == ids[0, 1].item() == tok.bos_token_id, "expected the processor's double BOS"
    inputs = pad_left(inputs, tok.pad_token_id)
    T = {"system": text_u8(system), "prompt": text_u8(PROMPT), "chat.text": text_u8(text),
         "chat.ids": ids[0].to(torch.int64)}
    with torch.no_grad():
        # as _enhance calls it: the stops and pad from the model's generation config (config.json's
        # eos_token_id, the tiny one's [1, 106] like Google's), greedy instead of its sampling
        out = model.generate(**inputs, do_sample=False, max_new_tokens=MAX_NEW)
        gen = out[0, inputs.input_ids.shape[1]:]
        T["gen.ids"] = gen.to(torch.int64)
        T["gen.text"] = text_u8(clean_response(tok.decode(gen.tolist(), skip_special_tokens=True)))
        # logits to warp: the model's after a plain prompt (spread out: the tiny model is peaked),
        # and normal draws with ties at the cut-offs
        lg = model(input_ids=tok("A cat walks", return_tensors="pt").input_ids).logits[0, -1]
    V = lg.shape[0]
    g = torch.Generator().manual_seed(7)
    sources = [lg / lg.std() * 0.5, torch.randn(V, generator=g) * 3.0]
    tied = torch.randn(V, generator=g).mul(2.0).round().div(2.0)  # many exact ties
    sources.append(tied)
    i = 0
    for src in sources:
        for temperature, top_k, top_p in WARPS:
            T[f"warp.{i}.logits"] = src.to(torch.float32)
            T[f"warp.{i}.probs"] = warped(src.to(torch.float32), temperature, top_k, top_p).to(torch.float32)
            T[f"warp.{i}.params"] = torch.tensor([temperature, top_k, top_p], dtype=torch.float64)
            i += 1
    for k, s in enumerate(CLEAN):
        T[f"clean.{k}.in"] = text_u8(s)
        T[f"clean.{k}.out"] = text_u8(clean_response(s))
    i2v_golden(model, tok, system, T)
    path = os.path.join(HERE, "data", "gemma_enhance.safetensors")
    save(T, path, {"generator": "tests/golden/gen_gemma_enhance.py", "max_new_tokens": str(MAX_NEW),
                   "eos_token_id": str(model.generation_config.eos_token_id), "decoding": "greedy (do_sample=False)",
                   "warps": str(WARPS), "chat_template": "Gemma-3's published format (see the generator)"})
    print(f"chat: {ids.shape[1]} ids {ids[0, :8].tolist()}..., padded to {inputs.input_ids.shape[1]}")
    print(f"greedy: {gen.tolist()} -> {clean_response(tok.decode(gen.tolist(), skip_special_tokens=True))!r}")
    for k in range(i):
        p = T[f"warp.{k}.probs"]
        print(f"warp {k} {T[f'warp.{k}.params'].tolist()}: {int((p > 0).sum())} tokens kept, max {p.max():.4f}")
    for k in range(len(CLEAN)):
        print(f"clean {k}: {bytes(T[f'clean.{k}.out'].tolist()).decode()!r}")


if __name__ == "__main__":
    main()
