#!/usr/bin/env python3
"""The tiny Gemma-3 tokenizer and the ids the reference gives for a prompt corpus.

Real Gemma-3 tokenizer files cannot be downloaded here, so a small SentencePiece BPE model is
trained with Gemma's settings (byte fallback, identity normaliser, no dummy prefix, whitespace
kept, digits split, whitespace-only pieces allowed, PAD/EOS/BOS/UNK = 0/1/2/3, user-defined
symbols for the chat and newline pieces). transformers' own conversion (GemmaTokenizer from
tokenizer.model, saved as tokenizer.json) gives the fast tokenizer ltx-core 1.0.0 loads
(AutoTokenizer, left padding), and LTXVGemmaTokenizer.tokenize_with_weights gives the ids.

Writes:
  weights/tiny/gemma/tokenizer.model         the SentencePiece model (what the engine reads)
  weights/tiny/gemma/tokenizer.json,
  weights/tiny/gemma/tokenizer_config.json   the converted fast tokenizer (what ltx-core reads)
  tests/golden/data/tokenizer.safetensors:
    prompt.bytes U8 [total]   UTF-8 of every prompt, back to back
    prompt.offset I64 [N+1]   prompt i is bytes [offset[i], offset[i+1])
    len I64 [N]               the padded length asked for (1024 for most, short ones test truncation)
    ids I32 [sum len]         the reference's ids, padded rows back to back
    mask U8 [sum len]         its attention mask
Deterministic (seeded corpus, one training thread).
"""
import io
import json
import os
import random
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)

import torchaudio_stub  # noqa: E402,F401  (before ltx_core)
import sentencepiece as spm  # noqa: E402
import torch  # noqa: E402
from transformers import AutoTokenizer  # noqa: E402

from ltx_core.text_encoders.gemma.tokenizer import LTXVGemmaTokenizer  # noqa: E402
from st_write import save  # noqa: E402

SEED = 20261127
VOCAB = 1024
MAX_LEN = 1024  # ltx-core's tokenizer length
OUT_DIR = os.path.join(ROOT, "weights", "tiny", "gemma")
GOLDEN = os.path.join(HERE, "data", "tokenizer.safetensors")

WORDS = ("a the of and in on with under over through camera pans slowly across city street night neon "
         "light rain falls gently woman man child walks runs dances sings crowd music plays piano guitar "
         "ocean wave sky cloud sun sunset forest tree river mountain snow close-up wide shot cinematic "
         "golden hour soft focus shallow depth field red blue green yellow old young smiling looking "
         "toward dog cat bird flies lands table coffee cup steam window reflection mirror glass").split()
SNIPPETS = ("東京の夜景", "猫が走る", "一只猫在雨中行走", "서울의 밤거리", "café naïve façade", "Привет мир",
            "Καλημέρα κόσμε", "مرحبا بالعالم", "שלום עולם", "नमस्ते दुनिया", "🎥🌊✨", "👩‍👩‍👧‍👦", "🇯🇵🇫🇷",
            "👍🏽", "12345", "3.14159", "$100", "e-mail@example.com", "C++ & <html>", "\"quoted\"")


def training_corpus(rng):
    out = []
    for i in range(4000):
        s = " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 18)))
        if i % 3 == 0:
            s += " " + rng.choice(SNIPPETS)
        if i % 17 == 0:
            s += "\n\n" + s[: len(s) // 2]
        if i % 19 == 0:
            s += "  \t  " + rng.choice(WORDS)
        out.append(s)
    return out


def prompt_corpus(rng):
    P = []
    # plain descriptive prompts, as users write them
    for _ in range(80):
        P.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 60))).capitalize() + ".")
    # every snippet alone, and mixed into prose
    for s in SNIPPETS:
        P.append(s)
        P.append(f"A {rng.choice(WORDS)} {s} {rng.choice(WORDS)}")
    # whitespace: runs, tabs, newlines, Unicode spaces at the ends (stripped) and inside (kept)
    P += ["two  spaces", "three   spaces", "     leading", "trailing     ", "\t\ttabs\t\tinside\t", "line\nbreak",
          "para\n\nbreak", "\n\n\nnewlines first", "crlf\r\nline", "\u3000ideographic space\u3000", "\xa0nbsp\xa0inside\xa0",
          "\u2028line separator\u2029", "mixed \u2003 em \u2009 thin", " \n \t ", "", "   ", "\u200bzero width\u200b",
          "\ufeffbom first", "a" + " " * 40 + "b", "x\n" * 30, "▁literal▁marks▁", "\x85next line\x85"]
    # control characters and odd code points
    P += ["bell\x07char", "esc\x1b[31mred\x1b[0m", "del\x7fchar", "nul-free \x01\x02\x03", "\x1c\x1d\x1e\x1f sep",
          "private \ue000\uf8ff", "astral \U0001F9E0\U00010348", "combining e\u0301 a\u0308", "rtl \u202eevil\u202c",
          "replacement \ufffd", "noncharacter \ufdd0"]
    # text that names special and byte pieces: the fast tokenizer matches added tokens in the text
    P += ["<bos>", "<eos> in text", "a <pad> b", "<unk>", "<mask> token", "<start_of_turn>user\nhi<end_of_turn>",
          "<0x41> byte name", "<bos><bos>", "almost <bo s>", "<start_of_turn", "end_of_turn>"]
    # random Unicode soup (byte fallback)
    for _ in range(40):
        n = rng.randint(1, 40)
        P.append("".join(chr(rng.choice((rng.randint(0x20, 0x7e), rng.randint(0xa1, 0x2fff),
                                          rng.randint(0x3000, 0x9fff), rng.randint(0x1f300, 0x1faff))))
                         for _ in range(n)))
    # prompts past 1024 tokens: long prose, and emoji (4 byte pieces each)
    P.append(" ".join(rng.choice(WORDS) for _ in range(1500)))
    P.append("🎬" * 300)
    P.append("x" * 1022)
    P.append("x" * 1023)
    P.append("x" * 2000)
    P.append("\n".join(" ".join(rng.choice(WORDS) for _ in range(20)) for _ in range(80)))
    return P


def main():
    rng = random.Random(SEED)
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(training_corpus(rng)), model_writer=model, model_type="bpe", vocab_size=VOCAB,
        byte_fallback=True, normalization_rule_name="identity", add_dummy_prefix=False,
        remove_extra_whitespaces=False, split_digits=True, allow_whitespace_only_pieces=True,
        pad_id=0, eos_id=1, bos_id=2, unk_id=3, pad_piece="<pad>", eos_piece="<eos>", bos_piece="<bos>",
        unk_piece="<unk>", user_defined_symbols=["<mask>", "<start_of_turn>", "<end_of_turn>", "\n", "\n\n"],
        character_coverage=1.0, num_threads=1, minloglevel=2)
    os.makedirs(OUT_DIR, exist_ok=True)
    model_path = os.path.join(OUT_DIR, "tokenizer.model")
    with open(model_path, "wb") as f:
        f.write(model.getvalue())

    # transformers' conversion: a GemmaTokenizer read from tokenizer.model, saved as tokenizer.json
    with tempfile.TemporaryDirectory() as slow:
        with open(os.path.join(slow, "tokenizer.model"), "wb") as f:
            f.write(model.getvalue())
        cfg = {"tokenizer_class": "GemmaTokenizer", "add_bos_token": True, "add_eos_token": False,
               "bos_token": "<bos>", "eos_token": "<eos>", "pad_token": "<pad>", "unk_token": "<unk>",
               "mask_token": "<mask>", "padding_side": "left"}
        with open(os.path.join(slow, "tokenizer_config.json"), "w") as f:
            json.dump(cfg, f)
        AutoTokenizer.from_pretrained(slow, local_files_only=True).save_pretrained(OUT_DIR)
    # save_pretrained records where it read the model from (a temporary path): drop it
    cfg_path = os.path.join(OUT_DIR, "tokenizer_config.json")
    with open(cfg_path) as f:
        saved = json.load(f)
    for key in ("vocab_file", "is_local", "local_files_only"):
        saved.pop(key, None)
    with open(cfg_path, "w") as f:
        json.dump(saved, f, indent=2, sort_keys=True)
        f.write("\n")

    prompts = prompt_corpus(rng)
    assert len(prompts) >= 200, len(prompts)
    lens = [MAX_LEN] * len(prompts)
    for i in range(0, len(prompts), 9):  # short rows: truncation of ordinary prompts
        lens[i] = 1 + i % 12
    blobs, offsets, ids, mask = [], [0], [], []
    tokenizers = {}
    for p, n in zip(prompts, lens):
        if n not in tokenizers:
            tokenizers[n] = LTXVGemmaTokenizer(OUT_DIR, max_length=n)
        pairs = tokenizers[n].tokenize_with_weights(p)["gemma"]
        assert len(pairs) == n
        ids += [int(t) for t, _ in pairs]
        mask += [int(w) for _, w in pairs]
        b = p.encode("utf-8")
        blobs.append(b)
        offsets.append(offsets[-1] + len(b))
    raw = b"".join(blobs)
    save({"prompt.bytes": torch.frombuffer(bytearray(raw), dtype=torch.uint8),
          "prompt.offset": torch.tensor(offsets, dtype=torch.int64),
          "len": torch.tensor(lens, dtype=torch.int64),
          "ids": torch.tensor(ids, dtype=torch.int32),
          "mask": torch.tensor(mask, dtype=torch.uint8)}, GOLDEN,
         metadata={"generator": "tests/golden/gen_tokenizer_goldens.py", "prompts": str(len(prompts)),
                   "vocab": str(VOCAB), "reference": "ltx-core 1.0.0 LTXVGemmaTokenizer over transformers' GemmaTokenizer"})
    print(f"{model_path}: {os.path.getsize(model_path)} bytes; {GOLDEN}: {len(prompts)} prompts, "
          f"{os.path.getsize(GOLDEN)} bytes")


if __name__ == "__main__":
    main()
