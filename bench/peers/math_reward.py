"""The math environment's reward, written for TRL: what a user of TRL would have to write to train on drmas's math
tasks with the same reward drmas gives.

A port of @drmas/plugin-env-math's `scoreMathResponse` (the last \\boxed{} after any </think>, checked by
`mathAnswersEqual`: normalized strings, exact rationals, tuples item by item, then a symbolic comparison),
`checkArithmeticClaims` (the math preset's `env.checkSteps`: a training answer counts only when no `a+b=c` claim of
the solution is false) and of the orchestra's output check for the Solver (`parseTaggedOutput` with tag `boxed`:
CJK characters, a malformed <think> block, a missing, unclosed or empty box make the turn invalid, which costs
`agents.solver.invalidPenalty`, 0.1 in the math preset). JavaScript's regular expressions, whitespace, trimming and
string lengths are reproduced where Python's differ. The symbolic step follows mathjs's parser for the subset
drmas's `symbolicallyEqual` accepts (arithmetic, sqrt/nthRoot/trig/log/exp/abs, one-letter variables, pi, e, i,
implicit multiplication) and evaluates at the same seeded points; it does not run mathjs's `simplify`, which drmas
tries first on small expressions with variables (arithmetic answers never have any).

test/interop/peersMathReward.test.ts checks that this module's verdicts equal drmas's own (from the built
@drmas/plugin-env-math and @drmas/plugin-orchestra) on real model outputs and adversarial near-misses.

    math_reward.py verdicts FILE.jsonl   reads {"response", "answer", "split"} lines, prints one verdict per line
"""
import cmath
import json
import math
import re
import sys

# JavaScript's \s (ECMAScript WhiteSpace and LineTerminator): Python's \s differs (\x1c-\x1f, \x85 yes, \ufeff no).
_WS = "\t\n\x0b\x0c\r \xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
S = f"[{_WS}]"
_WS_SET = set("\t\n\x0b\x0c\r \xa0\u1680\u2028\u2029\u202f\u205f\u3000\ufeff") | {chr(c) for c in range(0x2000, 0x200B)}


def js_trim(s):
    start, end = 0, len(s)
    while start < end and s[start] in _WS_SET:
        start += 1
    while end > start and s[end - 1] in _WS_SET:
        end -= 1
    return s[start:end]


def js_length(s):
    """String length in UTF-16 code units, as JavaScript counts it."""
    return len(s) + sum(1 for ch in s if ord(ch) > 0xFFFF)


def _is_space(ch):
    return ch in _WS_SET


# ---------------------------------------------------------------------------------------------- boxed answers

THINK_END = "</think>"
BOX_COMMANDS = ("\\boxed", "\\fbox")


def final_answer_section(text):
    end = text.rfind(THINK_END)
    return text if end < 0 else text[end + len(THINK_END):]


def _last_box_start(text):
    best = None
    for command in BOX_COMMANDS:
        frm = len(text)
        while frm >= 0:
            at = text.rfind(command, 0, frm + len(command))
            if at < 0:
                break
            after = text[at + len(command)] if at + len(command) < len(text) else ""
            if not re.match(r"[a-zA-Z]", after):
                if best is None or at > best[0]:
                    best = (at, len(command))
                break
            frm = at - 1
    return best


def read_brace_group(text, open_at):
    depth = 0
    i = open_at
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return text[open_at + 1:i], i + 1
        i += 1
    return None


def extract_boxed_answer(text):
    if not isinstance(text, str):
        return None
    section = final_answer_section(text)
    box = _last_box_start(section)
    if box is None:
        return None
    i = box[0] + box[1]
    after_name = i
    while i < len(section) and _is_space(section[i]):
        i += 1
    if i < len(section) and section[i] == "{":
        group = read_brace_group(section, i)
        return None if group is None else js_trim(group[0])
    if i == after_name:
        return None
    token = re.match(rf"[^{_WS}$]+", section[i:])
    return token.group(0) if token else None


def has_box_command(text):
    return _last_box_start(final_answer_section(text)) is not None


# ---------------------------------------------------------------------------------------------- normalization

_TEXT_COMMANDS = re.compile(rf"\\(?:text|textbf|textrm|mbox|mathrm|mathbf|operatorname){S}*\{{")


def _last_non_space(s, fallback):
    for ch in reversed(s):
        if not _is_space(ch):
            return ch
    return fallback


def _replace_groups(s, pattern, keep):
    out, before, frm, pos = "", "", 0, 0
    while True:
        m = pattern.search(s, pos)
        if not m:
            break
        group = read_brace_group(s, m.end() - 1)
        if group is None:
            break
        between = s[frm:m.start()]
        before = _last_non_space(between, before)
        kept = keep(group[0], before)
        out += between + kept
        before = _last_non_space(kept, before)
        frm = group[1]
        pos = group[1]
    return out + s[frm:]


def _remove_text_units(s):
    removed = "\x00"
    s = _replace_groups(s, _TEXT_COMMANDS, lambda content, before: removed if re.match(r"[0-9a-zA-Z})]", before) else content)
    s = re.sub(rf"\x00{S}*\^{S}*(?:\{{{S}*[0-9]{S}*\}}|[0-9])", "", s)
    return s.replace("\x00", "")


def _fix_sqrt(s):
    return re.sub(rf"\\sqrt(?![a-zA-Z{{\[]){S}*([0-9a-zA-Z])", lambda m: "\\sqrt{" + m.group(1) + "}", s)


def _fix_fracs(s):
    s = re.sub(r"\\frac([0-9a-zA-Z])([0-9a-zA-Z])", lambda m: "\\frac{%s}{%s}" % (m.group(1), m.group(2)), s)
    s = re.sub(r"\\frac([0-9a-zA-Z])\{", lambda m: "\\frac{%s}{" % m.group(1), s)
    return re.sub(r"\\frac(\{[^{}]*\})([0-9a-zA-Z])", lambda m: "\\frac%s{%s}" % (m.group(1), m.group(2)), s)


def _remove_short_assignment(s):
    parts = s.split("=")
    if len(parts) != 2:
        return s
    lhs = js_trim(parts[0])
    if js_length(lhs) <= 2 or re.fullmatch(r"(?:[a-zA-Z](?:_\{?[A-Za-z0-9_]+\}?)?|\\[a-zA-Z]+)", lhs):
        return parts[1]
    return s


def normalize_math_answer(answer):
    s = js_trim(str(answer if answer is not None else ""))
    boxed = re.match(rf"\\(?:boxed|fbox){S}*\{{", s)
    if boxed:
        group = read_brace_group(s, boxed.end() - 1)
        if group and group[1] == len(s):
            s = group[0]
    s = s.replace("\n", "")
    s = re.sub(r"\\[!,;:]", "", s)
    s = s.replace("\\ ", " ").replace("\\\\", "\\")
    s = re.sub(r"\\[dt]frac", lambda m: "\\frac", s)
    s = re.sub(r"\\(?:left|right)(?![a-zA-Z])", "", s)
    s = s.replace("\\displaystyle", "")
    s = re.sub(rf"\^{S}*\{{{S}*\\circ{S}*\}}|\^{S}*\\circ|\\circ|°", "", s)
    s = re.sub(r"\\\$|\$", "", s)
    s = re.sub(r"^\\\(|\\\)\Z", "", s)
    s = re.sub(r"^\\\[|\\\]\Z", "", s)
    s = _remove_text_units(s)
    s = re.sub(r"\\%|%", "", s).replace("{,}", ",")
    s = js_trim(s.replace(" .", " 0.").replace("{.", "{0."))
    if not s:
        return s
    if s.startswith("."):
        s = "0" + s
    s = re.sub(r"^([+-])\.", lambda m: m.group(1) + "0.", s)
    s = _remove_short_assignment(s)
    s = _fix_sqrt(s)
    s = re.sub(rf"{S}+", "", s)
    s = _fix_fracs(s)
    s = re.sub(r"\.\Z", "", s)
    if s == "0.5":
        s = "\\frac{1}{2}"
    slash = re.fullmatch(r"(-?)([0-9]+)/([0-9]+)", s)
    if slash:
        s = "%s\\frac{%s}{%s}" % slash.groups()
    return s


# ---------------------------------------------------------------------------------------------- exact numbers

MAX_EXACT_DIGITS = 1000
_DECIMAL = re.compile(r"([+-]?)([0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)?(?:\.([0-9]+))?")


def _make_exact(num, den):
    if den == 0:
        return None
    if den < 0:
        num, den = -num, -den
    g = math.gcd(num, den) or 1
    return num // g, den // g


def _parse_decimal(s):
    m = _DECIMAL.fullmatch(s)
    if not m or (m.group(2) is None and m.group(3) is None):
        return None
    whole = (m.group(2) or "0").replace(",", "")
    fraction = m.group(3) or ""
    if len(whole) + len(fraction) > MAX_EXACT_DIGITS:
        return None
    num = int(whole + fraction) * (-1 if m.group(1) == "-" else 1)
    return _make_exact(num, 10 ** len(fraction))


def parse_exact_number(normalized):
    s = re.sub(rf"{S}+", "", normalized)
    decimal = _parse_decimal(s)
    if decimal:
        return decimal
    frac = re.fullmatch(r"([+-]?)\\frac\{([^{}]+)\}\{([^{}]+)\}", s) or re.fullmatch(r"([+-]?)([^/]+)/([^/]+)", s)
    if not frac:
        return None
    top, bottom = _parse_decimal(frac.group(2)), _parse_decimal(frac.group(3))
    if not top or not bottom:
        return None
    value = _make_exact(top[0] * bottom[1], top[1] * bottom[0])
    if not value:
        return None
    return (-value[0], value[1]) if frac.group(1) == "-" else value


# ---------------------------------------------------------------------------------------------- symbolic (mathjs's grammar)

MAX_INPUT_LENGTH = 300
MAX_NODES = 80
MAX_LATEX_NESTING = 100
SAMPLE_POINTS = 6
MIN_AGREEING_POINTS = 3
RELATIVE_TOLERANCE = 1e-9
COMMANDS = {"cdot": "*", "times": "*", "div": "/", "pi": " pi ", "sin": " sin", "cos": " cos", "tan": " tan",
            "ln": " log", "log": " log", "exp": " exp"}
FUNCTIONS = {"sqrt", "nthRoot", "sin", "cos", "tan", "log", "exp", "abs"}
CONSTANTS = {"pi", "e", "i"}


def latex_to_mathjs(latex):
    closes = [-1] * len(latex)
    stack = []
    i = 0
    while i < len(latex):
        ch = latex[i]
        if ch == "\\":
            i += 1
        elif ch == "{":
            stack.append(i)
        elif ch == "}" and stack:
            closes[stack.pop()] = i
        i += 1

    def group(open_at, to):
        close = closes[open_at] if open_at < to and latex[open_at] == "{" else -1
        return (open_at + 1, close) if 0 <= close < to else None

    def translate(frm, to, depth):
        if depth > MAX_LATEX_NESTING:
            return None
        out = ""
        i = frm
        while i < to:
            ch = latex[i]
            if ch == "\\":
                m = re.compile(r"[a-zA-Z]+").match(latex, i + 1)
                name = m.group(0)[: to - i - 1] if m else ""
                if not name:
                    return None
                i += 1 + len(name)
                if name == "frac":
                    top = group(i, to)
                    bottom = top and group(top[1] + 1, to)
                    if not top or not bottom:
                        return None
                    a = translate(top[0], top[1], depth + 1)
                    b = None if a is None else translate(bottom[0], bottom[1], depth + 1)
                    if a is None or b is None:
                        return None
                    out += f"(({a})/({b}))"
                    i = bottom[1] + 1
                elif name == "sqrt":
                    index = None
                    if i < to and latex[i] == "[":
                        close = latex.find("]", i)
                        if close < 0 or close >= to:
                            return None
                        index = translate(i + 1, close, depth + 1)
                        if index is None:
                            return None
                        i = close + 1
                    body = group(i, to)
                    radicand = body and translate(body[0], body[1], depth + 1)
                    if not body or radicand is None:
                        return None
                    out += f" sqrt({radicand})" if index is None else f" nthRoot(({radicand}),({index}))"
                    i = body[1] + 1
                elif name in COMMANDS:
                    out += COMMANDS[name]
                else:
                    return None
            else:
                out += "(" if ch == "{" else ")" if ch == "}" else ch
                i += 1
        return out

    return translate(0, len(latex), 0)


class _Syntax(Exception):
    pass


def _tokens(src):
    """mathjs's tokenizer for what this subset needs; any other character is a syntax error here as there."""
    out = []
    i = 0
    n = len(src)
    while i < n:
        c = src[i]
        if c in " \t":
            i += 1
            continue
        if c == "0" and i + 1 < n and src[i + 1] in "bxo":
            # mathjs reads 0x.., 0b.., 0o.. as a radix literal, its digits as hex digits (0x/x is no number).
            j = i + 2
            while j < n and src[j] in "0123456789abcdefABCDEF":
                j += 1
            try:
                out.append(("num", str(float(int(src[i:j], 0)))))
            except ValueError:
                out.append(("num", "nan"))
            i = j
        elif c in "0123456789" or (c == "." and i + 1 < n and src[i + 1] in "0123456789"):
            j = i
            while j < n and src[j] in "0123456789":
                j += 1
            if j < n and src[j] == ".":
                j += 1
                while j < n and src[j] in "0123456789":
                    j += 1
            if j < n and src[j] in "eE" and j + 1 < n and (src[j + 1] in "0123456789+-"):
                j += 1
                if src[j] in "+-":
                    j += 1
                if j >= n or src[j] not in "0123456789":
                    raise _Syntax("digit expected")
                while j < n and src[j] in "0123456789":
                    j += 1
            out.append(("num", src[i:j]))
            i = j
        elif re.match(r"[A-Za-z_$]", c) or (ord(c) > 127 and c.isalpha()):
            j = i + 1
            while j < n and (re.match(r"[A-Za-z0-9_$]", src[j]) or (ord(src[j]) > 127 and src[j].isalpha())):
                j += 1
            out.append(("sym", src[i:j]))
            i = j
        elif c in "+-*/^(),":
            if c in "*/^" and i + 1 < n and src[i + 1] == "=":
                raise _Syntax("assignment operator")
            out.append(("op", c))
            i += 1
        else:
            raise _Syntax(f"unsupported character {c!r}")
    return out


class _Parser:
    """mathjs's precedence: add/subtract < multiply/divide < implicit multiplication < unary < power (right)."""

    def __init__(self, tokens):
        self.t = tokens
        self.i = 0

    def peek(self):
        return self.t[self.i] if self.i < len(self.t) else (None, None)

    def take(self):
        tok = self.peek()
        self.i += 1
        return tok

    def parse(self):
        node = self.add()
        if self.i != len(self.t):
            raise _Syntax("unexpected part")
        return node

    def add(self):
        node = self.mul()
        while self.peek() in (("op", "+"), ("op", "-")):
            op = self.take()[1]
            node = ("op", "add" if op == "+" else "subtract", [node, self.mul()])
        return node

    def mul(self):
        node = self.implicit()
        while self.peek() in (("op", "*"), ("op", "/")):
            op = self.take()[1]
            node = ("op", "multiply" if op == "*" else "divide", [node, self.implicit()])
        return node

    def implicit(self):
        node = last = self.rule2()
        while True:
            kind, value = self.peek()
            if kind == "sym" or (kind == "num" and last[0] not in ("const", "op")) or (kind, value) == ("op", "("):
                last = self.rule2()
                node = ("op", "multiply", [node, last])
            else:
                return node

    def rule2(self):
        """mathjs's "number / number symbol" rule: 1/2x is (1/2)x."""
        node = last = self.unary()
        while True:
            if self.peek() == ("op", "/") and (last[0] == "const" or (last[0] == "op" and last[1] == "unaryMinus" and last[2][0][0] == "const")):
                save = self.i
                self.take()
                if self.peek()[0] == "num":
                    self.take()
                    nxt = self.peek()
                    if nxt[0] == "sym" or nxt == ("op", "("):
                        self.i = save + 1
                        last = self.unary()
                        node = ("op", "divide", [node, last])
                        continue
                self.i = save
            return node

    def unary(self):
        if self.peek() == ("op", "-"):
            self.take()
            return ("op", "unaryMinus", [self.unary()])
        if self.peek() == ("op", "+"):
            self.take()
            return ("op", "unaryPlus", [self.unary()])
        return self.pow()

    def pow(self):
        node = self.primary()
        if self.peek() == ("op", "^"):
            self.take()
            node = ("op", "pow", [node, self.unary()])
        return node

    def primary(self):
        kind, value = self.take()
        if kind == "num":
            return ("const", float(value))
        if kind == "sym":
            if self.peek() == ("op", "("):
                self.take()
                args = []
                if self.peek() != ("op", ")"):
                    args.append(self.add())
                    while self.peek() == ("op", ","):
                        self.take()
                        args.append(self.add())
                if self.take() != ("op", ")"):
                    raise _Syntax("parenthesis expected")
                return ("fn", value, args)
            return ("sym", value)
        if (kind, value) == ("op", "("):
            inner = self.add()
            if self.take() != ("op", ")"):
                raise _Syntax("parenthesis expected")
            return ("paren", inner)
        raise _Syntax("value expected")


def _safe_size(node):
    count = 0

    def visit(n):
        nonlocal count
        count += 1
        if count > MAX_NODES:
            return False
        kind = n[0]
        if kind == "const":
            return True
        if kind == "sym":
            return bool(re.fullmatch(r"[a-zA-Z]", n[1])) or n[1] in CONSTANTS
        if kind == "paren":
            return visit(n[1])
        if kind == "op":
            return all(visit(a) for a in n[2])
        if kind == "fn":
            return n[1] in FUNCTIONS and all(visit(a) for a in n[2])
        return False

    return count if visit(node) else None


def _free_variables(node, names):
    kind = node[0]
    if kind == "sym" and node[1] not in CONSTANTS:
        names.add(node[1])
    elif kind == "paren":
        _free_variables(node[1], names)
    elif kind in ("op", "fn"):
        for a in node[2]:
            _free_variables(a, names)
    return names


def _pow(a, b):
    if a.imag == 0 and b.imag == 0 and (a.real >= 0 or float(b.real).is_integer()):
        return complex(math.pow(a.real, b.real))
    if a == 0:
        return complex(0) if b.real > 0 else complex(math.inf)
    return a ** b


def _nth_root(a, root):
    if a.imag == 0 and root.imag == 0 and float(root.real).is_integer() and root.real != 0:
        x, r = a.real, int(root.real)
        if x < 0 and r % 2 == 0:
            raise ValueError("no real even root of a negative number")
        value = math.copysign(abs(x) ** (1 / abs(r)), x) if r > 0 else 1 / math.copysign(abs(x) ** (1 / -r), x)
        return complex(value)
    raise ValueError("nthRoot of a complex or non-integer root")


def _evaluate(node, scope):
    kind = node[0]
    if kind == "const":
        return complex(node[1])
    if kind == "sym":
        name = node[1]
        if name in scope:
            return complex(scope[name])
        return {"pi": complex(math.pi), "e": complex(math.e), "i": 1j}[name]
    if kind == "paren":
        return _evaluate(node[1], scope)
    args = [_evaluate(a, scope) for a in node[2]]
    if kind == "op":
        fn = node[1]
        if fn == "add":
            return args[0] + args[1]
        if fn == "subtract":
            return args[0] - args[1]
        if fn == "multiply":
            return args[0] * args[1]
        if fn == "divide":
            if args[1] == 0:
                return complex(math.inf)
            return args[0] / args[1]
        if fn == "unaryMinus":
            return -args[0]
        if fn == "unaryPlus":
            return args[0]
        if fn == "pow":
            return _pow(args[0], args[1])
    name = node[1]
    x = args[0] if args else None
    if name == "sqrt" and len(args) == 1:
        return complex(math.sqrt(x.real)) if x.imag == 0 and x.real >= 0 else cmath.sqrt(x)
    if name == "nthRoot" and len(args) in (1, 2):
        return _nth_root(x, args[1] if len(args) == 2 else complex(2))
    if name == "abs" and len(args) == 1:
        return complex(abs(x))
    if name == "log" and len(args) in (1, 2):
        if x == 0:
            return complex(-math.inf)
        value = complex(math.log(x.real)) if x.imag == 0 and x.real > 0 else cmath.log(x)
        if len(args) == 2:
            base = args[1]
            value = value / (complex(math.log(base.real)) if base.imag == 0 and base.real > 0 else cmath.log(base))
        return value
    if len(args) == 1 and name in ("sin", "cos", "tan", "exp"):
        if x.imag == 0:
            return complex(getattr(math, name)(x.real))
        return getattr(cmath, name)(x)
    raise ValueError(f"{name} with {len(args)} arguments")


def _as_complex(node, scope):
    try:
        value = _evaluate(node, scope)
    except (ValueError, OverflowError, ZeroDivisionError, KeyError):
        return None
    if math.isfinite(value.real) and math.isfinite(value.imag):
        return value
    return None


def _close(a, b):
    scale = max(1.0, abs(a), abs(b))
    return abs(a - b) <= RELATIVE_TOLERANCE * scale


def _parse_latex(latex):
    if js_length(latex) > MAX_INPUT_LENGTH:
        return None
    source = latex_to_mathjs(latex)
    if source is None or not js_trim(source):
        return None
    node = _Parser(_tokens(source)).parse()
    return node if _safe_size(node) is not None else None


class _SplitMix32:
    def __init__(self, seed):
        self.state = seed & 0xFFFFFFFF

    def float(self):
        self.state = (self.state + 0x9E3779B9) & 0xFFFFFFFF
        z = self.state
        z = ((z ^ (z >> 16)) * 0x85EBCA6B) & 0xFFFFFFFF
        z = ((z ^ (z >> 13)) * 0xC2B2AE35) & 0xFFFFFFFF
        return ((z ^ (z >> 16)) & 0xFFFFFFFF) / 4294967296


def symbolically_equal(a, b):
    try:
        left, right = _parse_latex(a), _parse_latex(b)
    except (_Syntax, RecursionError):
        return False
    if left is None or right is None:
        return False
    variables = sorted(_free_variables(left, set()) | _free_variables(right, set()))
    if not variables:
        x, y = _as_complex(left, {}), _as_complex(right, {})
        return x is not None and y is not None and _close(x, y)
    random = _SplitMix32(0x5EED)
    agreeing = 0
    for _ in range(SAMPLE_POINTS):
        scope = {v: 0.3 + 2 * random.float() for v in variables}
        x, y = _as_complex(left, scope), _as_complex(right, scope)
        if x is None and y is None:
            continue
        if x is None or y is None or not _close(x, y):
            return False
        agreeing += 1
    return agreeing >= MIN_AGREEING_POINTS


# ---------------------------------------------------------------------------------------------- equivalence

MAX_ANSWER_LENGTH = 10_000
MAX_TUPLE_DEPTH = 8


def _split_tuple(s):
    opener, closer, body = "", "", s
    if re.match(r"[(\[]", s) and re.search(r"[)\]]\Z", s):
        depth, closes_at_end = 0, True
        for i, ch in enumerate(s):
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            if depth == 0 and i < len(s) - 1:
                closes_at_end = False
        if closes_at_end:
            opener, closer, body = s[0], s[-1], s[1:-1]
    items, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(body[start:i])
            start = i + 1
    items.append(body[start:])
    return (opener, closer, items) if len(items) > 1 else None


def _normalized_equal(a, b, depth=0):
    if not a or not b:
        return False
    if a == b:
        return True
    x, y = parse_exact_number(a), parse_exact_number(b)
    if x and y:
        return x == y
    ta, tb = _split_tuple(a), _split_tuple(b)
    if ta or tb:
        if not ta or not tb or ta[0] != tb[0] or ta[1] != tb[1] or len(ta[2]) != len(tb[2]):
            return False
        if depth >= MAX_TUPLE_DEPTH:
            return False
        return all(_normalized_equal(normalize_math_answer(p), normalize_math_answer(q), depth + 1) for p, q in zip(ta[2], tb[2]))
    return symbolically_equal(a, b)


def math_answers_equal(predicted, truth):
    try:
        if predicted is None or truth is None:
            return False
        p, t = str(predicted), str(truth)
        if js_length(p) > MAX_ANSWER_LENGTH or js_length(t) > MAX_ANSWER_LENGTH:
            return p == t
        return _normalized_equal(normalize_math_answer(p), normalize_math_answer(t))
    except RecursionError:
        return False


def score_math_response(text, truth):
    """{'correct', 'extracted', 'reason'} as drmas's scoreMathResponse."""
    response = text if isinstance(text, str) else ""
    extracted = extract_boxed_answer(response)
    if extracted is None:
        truncated = has_box_command(response) or ("<think>" in response and "</think>" not in response)
        return {"correct": False, "reason": "truncated" if truncated else "no_boxed"}
    correct = math_answers_equal(extracted, truth)
    return {"correct": correct, "extracted": extracted, "reason": "correct" if correct else "wrong"}


# ---------------------------------------------------------------------------------------------- worked steps

_CLAIM_START = re.compile(r"(?<![A-Za-z0-9_./^()+\-*])[0-9]+")
_NEXT_TERM = re.compile(rf"{S}*[-+*]{S}*[0-9]+")
_CLAIMED_VALUE = re.compile(rf"{S}*={S}*(-?[0-9]+)(?![A-Za-z0-9_/^(]|\.[0-9])")
MAX_CLAIM_LENGTH = 1000


def _evaluate_claim(expression):
    total = 0
    for term in re.findall(r"[+-]?[^+-]+", re.sub(rf"{S}+", "", expression)):
        negative = term.startswith("-")
        product = 1
        for factor in re.sub(r"^[+-]", "", term).split("*"):
            product *= int(factor)
        total += -product if negative else product
    return total


def check_arithmetic_claims(text):
    """{'claims', 'false'} as drmas's checkArithmeticClaims."""
    claims = wrong = 0
    pos = 0
    while True:
        first = _CLAIM_START.search(text, pos)
        if not first:
            break
        end, terms = first.end(), 0
        while True:
            term = _NEXT_TERM.match(text, end)
            if not term:
                break
            end, terms = term.end(), terms + 1
        pos = end
        if terms == 0:
            continue
        claimed = _CLAIMED_VALUE.match(text, end)
        if not claimed:
            continue
        pos = claimed.end()
        if js_length(text[first.start():claimed.end()]) > MAX_CLAIM_LENGTH:
            continue
        claims += 1
        if _evaluate_claim(text[first.start():end]) != int(claimed.group(1)):
            wrong += 1
    return {"claims": claims, "false": wrong}


# ---------------------------------------------------------------------------------------------- the Solver's turn

_CJK = re.compile("[\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def _occurrences(text, needle):
    return [m.start() for m in re.finditer(re.escape(needle), text, re.IGNORECASE | re.ASCII)]


def solver_turn_valid(text):
    """The orchestra's check of a Solver turn (parseTaggedOutput with tag `boxed`): True, or why it is invalid."""
    text = text if isinstance(text, str) else ""
    if _CJK.search(text):
        return "contains CJK characters"
    opens, closes = _occurrences(text, "<think>"), _occurrences(text, "</think>")
    if len(opens) > 1 or len(closes) > 1:
        return "more than one <think> block"
    if len(opens) == 1 and not closes:
        return "unclosed <think>"
    if not opens and len(closes) == 1:
        return "</think> without <think>"
    outside = text
    if opens:
        if closes[0] < opens[0]:
            return "</think> before <think>"
        outside = text[: opens[0]] + text[closes[0] + len("</think>"):]
    content = extract_boxed_answer(outside)
    if content is None:
        return "unclosed \\boxed{}" if re.search(r"\\(boxed|fbox)", outside) else "missing \\boxed{}"
    if content == "":
        return "empty \\boxed{}"
    return True


def outcome(response, answer, split="train", check_steps=True):
    """The math environment's outcome: 1 for a right answer (with check_steps, on a training task, only when no
    worked step's claim is false), else 0."""
    correct = score_math_response(response, answer)["correct"]
    steps_hold = not check_steps or split != "train" or check_arithmetic_claims(response)["false"] == 0
    return 1.0 if correct and steps_hold else 0.0


def solver_reward(response, answer, split="train", check_steps=True, invalid_penalty=0.1):
    """What drmas's reward allocator gives a Solver turn: the outcome, minus the penalty when the turn is invalid."""
    return outcome(response, answer, split, check_steps) - (0.0 if solver_turn_valid(response) is True else invalid_penalty)


def make_reward_func(check_steps=True, invalid_penalty=0.1):
    """A TRL reward function: the dataset's `answer` and `split` columns come in as keyword lists."""

    def math_reward(completions, answer, split=None, **_):
        splits = split or ["train"] * len(completions)
        return [solver_reward(c, a, s, check_steps, invalid_penalty) for c, a, s in zip(completions, answer, splits)]

    return math_reward


def _verdicts(path):
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            if not line.strip():
                continue
            case = json.loads(line)
            response, answer = case["response"], case["answer"]
            score = score_math_response(response, answer)
            print(json.dumps({
                "correct": score["correct"],
                "extracted": score.get("extracted"),
                "reason": score["reason"],
                "falseClaims": check_arithmetic_claims(response)["false"],
                "valid": solver_turn_valid(response) is True,
                "reward": solver_reward(response, answer, case.get("split", "train")),
            }))


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "verdicts":
        _verdicts(sys.argv[2])
    else:
        sys.exit(__doc__)
