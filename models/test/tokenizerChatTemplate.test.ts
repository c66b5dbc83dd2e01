import { buildCharacterTokenizer } from '../src/tokenizer/buildCharacterTokenizer.js';
import { ChatTemplateRenderer, DEFAULT_CHAT_TEMPLATE, pythonStrip } from '../src/tokenizer/ChatTemplate.js';
import { Tokenizer } from '../src/tokenizer/Tokenizer.js';

const messages = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: 'Hi 👋' },
  { role: 'assistant', content: 'Hello.' },
];

test('default ChatML template', () => {
  const tok = buildCharacterTokenizer('abc');
  expect(tok.chatTemplate).toBe(DEFAULT_CHAT_TEMPLATE);
  expect(tok.applyChatTemplate(messages)).toBe(
    '<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHi 👋<|im_end|>\n<|im_start|>assistant\nHello.<|im_end|>\n',
  );
  expect(tok.applyChatTemplate(messages.slice(0, 2), { addGenerationPrompt: true })).toBe(
    '<|im_start|>system\nYou are terse.<|im_end|>\n<|im_start|>user\nHi 👋<|im_end|>\n<|im_start|>assistant\n',
  );
});

test('the rendered prompt encodes its markup as special tokens', () => {
  const tok = buildCharacterTokenizer('abcdefghijklmnopqrstuvwxyz\n');
  const ids = tok.encode(tok.applyChatTemplate([{ role: 'user', content: 'hi' }], { addGenerationPrompt: true }));
  const start = tok.tokenToId('<|im_start|>')!;
  const end = tok.tokenToId('<|im_end|>')!;
  const c = (s: string) => tok.tokenToId(s)!;
  expect(ids).toEqual([start, ...'user\nhi'.split('').map(c), end, c('\n'), start, ...'assistant\n'.split('').map(c)]);
});

describe('templates from tokenizer_config.json', () => {
  const json = buildCharacterTokenizer('abc').toJSON();
  // A Qwen2.5-like template: tools in a system preamble, special-token variables, extra variables, and errors.
  const qwenLike =
    '{%- if tools %}{{- "<|im_start|>system\\nTools:" }}{%- for tool in tools %}{{- " " + tool.name }}{%- endfor %}{{- "<|im_end|>\\n" }}{%- endif %}' +
    '{%- for m in messages %}{%- if m.role not in ["system", "user", "assistant"] %}{{ raise_exception("bad role " + m.role) }}{%- endif %}' +
    '{{- "<|im_start|>" + m.role + "\\n" + m.content + "<|im_end|>\\n" }}{%- endfor %}' +
    '{%- if add_generation_prompt %}{{- "<|im_start|>assistant\\n" }}{%- if enable_thinking is false %}{{- "<think>\\n\\n</think>\\n\\n" }}{%- endif %}{%- endif %}' +
    '{{- eos_token if append_eos else "" }}';
  const tok = new Tokenizer(json, { eos_token: '<|im_end|>', chat_template: qwenLike });

  test('tools, extra variables and special tokens reach the template', () => {
    expect(
      tok.applyChatTemplate([{ role: 'user', content: 'q' }], {
        addGenerationPrompt: true,
        tools: [{ name: 'search' }, { name: 'calc' }],
        enable_thinking: false,
      }),
    ).toBe(
      '<|im_start|>system\nTools: search calc<|im_end|>\n<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n',
    );
    expect(tok.applyChatTemplate([{ role: 'user', content: 'q' }], { append_eos: true })).toBe('<|im_start|>user\nq<|im_end|>\n<|im_end|>');
  });

  test('raise_exception surfaces as an error', () => {
    expect(() => tok.applyChatTemplate([{ role: 'robot', content: 'x' }])).toThrow(/failed to render.*bad role robot/);
  });

  test('named templates: tool_use is picked when tools are given', () => {
    const named = new Tokenizer(json, {
      chat_template: [
        { name: 'default', template: 'plain' },
        { name: 'tool_use', template: 'with {{ tools | length }} tools' },
      ],
    });
    expect(named.applyChatTemplate([])).toBe('plain');
    expect(named.applyChatTemplate([], { tools: [{}, {}] })).toBe('with 2 tools');
  });

  test('no template is a clear error; one can be passed in', () => {
    const bare = new Tokenizer(json, {});
    expect(() => bare.applyChatTemplate(messages)).toThrow(/no chat_template.*chatTemplate/);
    expect(bare.applyChatTemplate([{ role: 'user', content: 'x' }], { chatTemplate: DEFAULT_CHAT_TEMPLATE })).toBe(
      '<|im_start|>user\nx<|im_end|>\n',
    );
  });
});

test("Python's strip, lstrip and rstrip: only the characters named, or Python's whitespace", () => {
  expect(pythonStrip('\n\n\tanswer\n', '\n', 'lstrip')).toBe('\tanswer\n');
  expect(pythonStrip(' \n x \n', '\n', 'lstrip')).toBe(' \n x \n');
  expect(pythonStrip('abxba', 'ab', 'strip')).toBe('x');
  expect(pythonStrip('abxba', 'ab', 'rstrip')).toBe('abx');
  // Python's str.strip() keeps U+FEFF and removes \x1c and \x85; JavaScript's trim does the opposite.
  expect(pythonStrip('\ufeff x\x1c\x85', undefined, 'strip')).toBe('\ufeff x');
  expect(pythonStrip('😀 x 😀', '😀', 'strip')).toBe(' x ');
});

test("templates strip as Python does: .lstrip('\\n') keeps spaces and tabs (Qwen3's answers), | trim keeps U+FEFF", () => {
  const template = "{{ s.lstrip('\\n') }}|{{ s.rstrip('\\n') }}|{{ s.strip('\\n') }}|{{ s.strip() }}|{{ t | trim }}";
  const rendered = new ChatTemplateRenderer().render(template, [], { s: '\n \tanswer \n\n', t: '\ufeffx ' });
  expect(rendered).toBe(' \tanswer \n\n|\n \tanswer |' + ' \tanswer |answer|\ufeffx');
});
