"""transformers' AutoTokenizer on a tokenizer folder: encodings, decodings and chat-template renders of the cases in
the JSON file argv[1] ({"texts", "idSequences", "chats"}); prints the results as JSON, case for case."""
import json
import sys

from transformers import AutoTokenizer

cases = json.load(open(sys.argv[1], encoding="utf-8"))
tokenizer = AutoTokenizer.from_pretrained(cases["dir"])
texts = cases["texts"]
plain = tokenizer(texts, add_special_tokens=False)["input_ids"]
special = tokenizer(texts, add_special_tokens=True)["input_ids"]
out = {
    "encoded": plain,
    "encodedWithSpecial": special,
    "decodedRoundTrip": [tokenizer.decode(ids) for ids in plain],
    "decoded": [tokenizer.decode(ids) for ids in cases["idSequences"]],
    "decodedSkipping": [tokenizer.decode(ids, skip_special_tokens=True) for ids in cases["idSequences"]],
    "chats": [
        tokenizer.apply_chat_template(
            chat["messages"], tools=chat.get("tools"), tokenize=False, add_generation_prompt=chat["addGenerationPrompt"]
        )
        for chat in cases["chats"]
    ],
}
json.dump(out, sys.stdout, ensure_ascii=False)
