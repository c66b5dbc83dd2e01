#!/usr/bin/env python3
"""Encodes and decodes texts with the Hugging Face `tokenizers` library, for comparison with the TS tokenizer.

Usage: encode_with_tokenizers.py TOKENIZER_JSON < texts.json   (a JSON list of strings)
Prints JSON: [{"ids": [...], "ids_no_special": [...], "decoded": "...", "decoded_skip": "..."}, ...].
Exit status 3 when `tokenizers` is not installed.
"""
import json
import sys

try:
    from tokenizers import Tokenizer
except ImportError:
    print("tokenizers is not installed", file=sys.stderr)
    sys.exit(3)


def main():
    tok = Tokenizer.from_file(sys.argv[1])
    texts = json.load(sys.stdin)
    out = []
    for text in texts:
        ids = tok.encode(text, add_special_tokens=True).ids
        out.append({
            "ids": ids,
            "ids_no_special": tok.encode(text, add_special_tokens=False).ids,
            "decoded": tok.decode(ids, skip_special_tokens=False),
            "decoded_skip": tok.decode(ids, skip_special_tokens=True),
        })
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
