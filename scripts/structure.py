#!/usr/bin/env python3
"""Measure the code structure of the crate's src/ tree and print a short report.

Run from anywhere:

    python3 scripts/structure.py                  # text report
    python3 scripts/structure.py --json           # the same data as JSON
    python3 scripts/structure.py --check          # exit 1 on any import circle
    python3 scripts/structure.py --max-fn 80      # functions listed as long (the default)
    python3 scripts/structure.py --src path/to/src            # another tree (default: src/ beside scripts/)

Everything is measured from the source text (no cargo, standard library only):

1. Import circles, in every folder. A folder's members are its files and its subfolders (a
   subfolder stands for every file below it); its own mod.rs (lib.rs for src/) is the folder
   itself, not a member, so a parent and its children never form a circle. File A imports
   file B when non-test code in A names an item of B's module by a path: `crate::`,
   `super::`, `self::`, a child module's name or a name A's own `use` brought in, with
   `{..}` groups expanded, followed through re-exports (`pub use b::Thing;` in a mod.rs makes
   `super::Thing` an import of b.rs). Mentions inside comments and string literals do not
   count. Member X imports member Y when a file in X imports a file in Y. Every strongly
   connected set of two or more members is a circle (Tarjan), printed with, for each import
   inside it, the first file:line that creates it and how many mentions create it in all.
   This is the one check: files that import each other, directly or around a loop, are one
   concept cut in two. Not seen: names renamed with `use .. as ..`, and macros' paths.
2. Production lines. Test code is: files named *_tests.rs, fixture.rs or *_property.rs;
   files reachable from lib.rs/main.rs only through `#[cfg(test)] mod x;` declarations (with
   or without `#[path = ...]`); and inside every file the `#[cfg(test)] mod ...` items
   themselves (an inline `mod tests { ... }` block up to its closing brace, or the
   `#[cfg(test)] #[path = ..] mod x;` declaration).
3. Functions over --max-fn lines in production code (a report, not a check): every
   `fn name ... {` item with a body, its braces matched while skipping string literals (raw
   strings too), char literals (not lifetimes) and comments. Length = the `fn` line to the
   closing `}` line, inclusive. Functions inside test modules are skipped.
4. Totals: lines of all .rs files under src/ (wc -l style: newline characters) and lines
   of production code only (production files without their test items).

Exit code is 0 (it is a report) unless --check is given: then 1 when there is a circle.
"""

import argparse
import json
import os
import re
import sys

IDENT = r"(?:r#)?[A-Za-z_][A-Za-z0-9_]*"


def is_ident_char(ch):
    return ch.isalnum() or ch == "_"


# --------------------------------------------------------------------------- lexing


def sanitize(text):
    """Return `text` with comments and the insides of string and char literals blanked.

    The result has exactly the same length and newlines as `text`, so offsets and line
    numbers carry over. Quote characters of literals are kept; everything between them
    (and all of a comment) becomes spaces. Returns (sanitized, problems).
    """
    out = list(text)
    n = len(text)
    problems = []
    i = 0

    def blank(a, b):
        for k in range(a, min(b, n)):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        # line comment (// , ///, //!)
        if c == "/" and i + 1 < n and text[i + 1] == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            blank(i, j)
            i = j
            continue
        # block comment, nested
        if c == "/" and i + 1 < n and text[i + 1] == "*":
            depth = 1
            j = i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth += 1
                    j += 2
                elif text.startswith("*/", j):
                    depth -= 1
                    j += 2
                else:
                    j += 1
            if depth:
                problems.append("unterminated block comment at offset %d" % i)
            blank(i, j)
            i = j
            continue
        # ordinary (byte / C) string
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            if j >= n:
                problems.append("unterminated string at offset %d" % i)
            blank(i + 1, j)
            i = j + 1
            continue
        # char literal or lifetime / label
        if c == "'":
            if i + 1 < n and text[i + 1] == "\\":
                # escaped char: '\n', '\'', '\\', '\x7f', '\u{1F600}'
                j = i + 3
                while j < n and text[j] != "'" and text[j] != "\n":
                    j += 1
                if j < n and text[j] == "'":
                    blank(i + 1, j)
                    i = j + 1
                    continue
                problems.append("odd char literal at offset %d" % i)
                i += 1
                continue
            if i + 2 < n and text[i + 2] == "'" and text[i + 1] != "\n":
                blank(i + 1, i + 2)
                i += 3
                continue
            # a lifetime or label ('a, 'static, 'outer:): plain code
            i += 1
            continue
        # identifiers in one go (so the `r` ending `bar` is never a raw-string prefix);
        # r / br / cr directly followed by #s and a quote start a raw string
        if is_ident_char(c):
            j = i + 1
            while j < n and is_ident_char(text[j]):
                j += 1
            if text[i:j] in ("r", "br", "cr"):
                k = j
                while k < n and text[k] == "#":
                    k += 1
                if k < n and text[k] == '"':
                    close = '"' + "#" * (k - j)
                    end = text.find(close, k + 1)
                    if end < 0:
                        problems.append("unterminated raw string at offset %d" % i)
                        end = n
                    blank(k + 1, end)
                    i = end + len(close)
                    continue
            i = j
            continue
        i += 1
    return "".join(out), problems


def line_starts(text):
    starts = [0]
    for m in re.finditer("\n", text):
        starts.append(m.end())
    return starts


def line_of(starts, offset):
    """1-based line number of `offset`."""
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo + 1


def match_close(s, open_pos):
    """Offset of the bracket closing the one at `open_pos` in sanitized text, or None."""
    pairs = {"{": "}", "(": ")", "[": "]"}
    opener = s[open_pos]
    closer = pairs[opener]
    depth = 0
    for k in range(open_pos, len(s)):
        ch = s[k]
        if ch == opener:
            depth += 1
        elif ch == closer:
            depth -= 1
            if depth == 0:
                return k
    return None


def skip_ws(s, i):
    while i < len(s) and s[i].isspace():
        i += 1
    return i


# --------------------------------------------------------------------------- items

CFG_TEST = re.compile(r"#\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]")
INNER_CFG_TEST = re.compile(r"#\s*!\s*\[\s*cfg\s*\(\s*test\s*\)\s*\]")
MOD_DECL = re.compile(r"(?<![A-Za-z0-9_])mod\s+(" + IDENT + r")\s*([;{])")
PATH_ATTR = re.compile(r'#\s*\[\s*path\s*=\s*"([^"]*)"\s*\]')


def attrs_start_backward(s, i):
    """Extend an item start backwards over attributes directly in front of offset i."""
    while True:
        j = i - 1
        while j >= 0 and s[j].isspace():
            j -= 1
        if j < 0 or s[j] != "]":
            return i
        depth = 0
        k = j
        while k >= 0:
            if s[k] == "]":
                depth += 1
            elif s[k] == "[":
                depth -= 1
                if depth == 0:
                    break
            k -= 1
        if k < 0:
            return i
        h = k - 1
        while h >= 0 and s[h].isspace():
            h -= 1
        if h < 0 or s[h] != "#":
            return i
        i = h


class ModItem:
    """A `mod name;` or `mod name { ... }` item."""

    def __init__(self, name, start, end, inline, test, path_attr, body_open):
        self.name = name
        self.start = start          # offset of its first attribute (or `mod`/`pub`)
        self.end = end              # offset just past `;` or the closing `}`
        self.inline = inline
        self.test = test            # carries #[cfg(test)]
        self.path_attr = path_attr  # value of #[path = "..."] or None
        self.body_open = body_open  # offset of `{` for inline mods


def find_mod_items(s, raw):
    """All mod items in sanitized text `s` (original text `raw` for #[path] values)."""
    items = []
    for m in MOD_DECL.finditer(s):
        name = m.group(1)
        kind = m.group(2)
        start = m.start()
        # include a visibility and the attributes in front
        before = s[:start].rstrip()
        vm = re.search(r"pub\s*(\([^)]*\))?\s*$", before)
        if vm:
            start = vm.start()
        start = attrs_start_backward(s, start)
        attr_text = s[start:m.start()]
        test = bool(CFG_TEST.search(attr_text))
        path_attr = None
        for pm in PATH_ATTR.finditer(attr_text):
            a = start + pm.start(1)
            path_attr = raw[a:start + pm.end(1)]
        if kind == ";":
            items.append(ModItem(name, start, m.end(), False, test, path_attr, None))
        else:
            open_pos = m.end() - 1
            close = match_close(s, open_pos)
            end = len(s) if close is None else close + 1
            items.append(ModItem(name, start, end, True, test, path_attr, open_pos))
    return items


class Source:
    """One .rs file, lexed."""

    def __init__(self, path, rel):
        self.path = path
        self.rel = rel
        with open(path, "rb") as fh:
            data = fh.read()
        self.raw = data.decode("utf-8", errors="replace")
        self.lines = self.raw.count("\n")  # wc -l
        self.san, self.problems = sanitize(self.raw)
        self.starts = line_starts(self.raw)
        self.mods = find_mod_items(self.san, self.raw)
        self.test_spans = [(m.start, m.end) for m in self.mods if m.test]
        self.whole_file_test = bool(INNER_CFG_TEST.search(self.san[:self._inner_attr_limit()]))
        self.stray_cfg_test = []
        spans = self.test_spans
        for cm in CFG_TEST.finditer(self.san):
            if not any(a <= cm.start() < b for a, b in spans):
                self.stray_cfg_test.append(line_of(self.starts, cm.start()))

    def _inner_attr_limit(self):
        # inner attributes come before the first item; a generous bound is fine
        m = re.search(r"(?m)^\s*(pub|use|mod|fn|struct|enum|impl|const|static|type|trait)\b",
                      self.san)
        return m.start() if m else len(self.san)

    def line(self, offset):
        return line_of(self.starts, offset)

    def in_test(self, offset):
        return self.whole_file_test or any(a <= offset < b for a, b in self.test_spans)

    def test_lines(self):
        """Number of lines covered by #[cfg(test)] mod items (whole lines, merged)."""
        covered = set()
        for a, b in self.test_spans:
            la = self.line(a)
            lb = self.line(max(a, b - 1))
            covered.update(range(la, lb + 1))
        return len(covered)


# --------------------------------------------------------------------------- module tree


def is_test_name(name):
    return name.endswith("_tests.rs") or name == "fixture.rs" or name.endswith("_property.rs")


def module_dir(rel):
    """Directory where `mod x;` declared at the top of file `rel` looks for x."""
    d, base = os.path.split(rel)
    if base in ("mod.rs", "lib.rs", "main.rs"):
        return d
    return os.path.join(d, base[:-3])


def resolve_mods(src_root, sources):
    """Walk the module tree from lib.rs/main.rs.

    Returns (reach, warnings): reach maps rel path -> "prod" or "test" for every file
    reached; a file is "prod" when some chain of non-test `mod` declarations reaches it.
    """
    warnings = []
    reach = {}
    roots = [r for r in ("lib.rs", "main.rs") if r in sources]
    stack = [(r, False) for r in roots]
    while stack:
        rel, test = stack.pop()
        state = "test" if test else "prod"
        if reach.get(rel) == "prod" or reach.get(rel) == state:
            continue
        reach[rel] = state
        src = sources[rel]
        test = test or src.whole_file_test
        inline = [m for m in src.mods if m.inline]
        for m in src.mods:
            if m.inline:
                continue
            enclosing = [o for o in inline if o.body_open < m.start < o.end]
            enclosing.sort(key=lambda o: o.start)
            child_test = test or m.test or any(o.test for o in enclosing)
            comps = [o.name.replace("r#", "") for o in enclosing]
            name = m.name.replace("r#", "")
            if m.path_attr is not None:
                base = os.path.dirname(rel) if not enclosing else os.path.join(
                    module_dir(rel), *comps)
                cands = [os.path.normpath(os.path.join(base, m.path_attr))]
            else:
                base = os.path.join(module_dir(rel), *comps)
                cands = [os.path.join(base, name + ".rs"), os.path.join(base, name, "mod.rs")]
            found = [c for c in cands if c in sources]
            if not found:
                warnings.append("%s:%d: `mod %s;` resolves to no file under src/ (looked for %s)"
                                % (rel_src(rel), src.line(m.start), name,
                                   ", ".join(rel_src(c) for c in cands)))
                continue
            stack.append((found[0], child_test))
    return reach, warnings


DISPLAY_ROOT = ["src"]


def rel_src(rel):
    return os.path.join(DISPLAY_ROOT[0], rel)


# --------------------------------------------------------------------------- imports

SEGMENT = re.compile(r"\s*(" + IDENT + r")")
SEPARATOR = re.compile(r"\s*::")
PATH_START = re.compile(r"(?<![A-Za-z0-9_:$])(" + IDENT + r")\s*::(?!\s*<)")
USE_BEFORE = re.compile(r"(?<![A-Za-z0-9_])use\s+$")


def module_of(rel):
    """The module path of a file: src/a/b.rs and src/a/b/mod.rs -> ("a", "b"); lib.rs -> ()."""
    parts = rel[:-3].split(os.sep)
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return tuple(parts)


def expand_path(s, i, prefix, out):
    """Read a path on from s[i], just after `prefix[-1]::`, into out as segment lists.

    `{a, b::{c, d}}` groups expand to one list each; a glob ends its list with "*".
    """
    while True:
        j = i
        while j < len(s) and s[j].isspace():
            j += 1
        if j < len(s) and s[j] == "{":
            close = match_close(s, j)
            if close is None:
                return
            depth = 0
            item = j + 1
            for k in range(j, close + 1):
                ch = s[k]
                if ch == "{":
                    depth += 1
                elif ch == "}":
                    depth -= 1
                if (ch == "," and depth == 1) or k == close:
                    text = s[item:k]
                    m = SEGMENT.match(text)
                    if m:
                        name = m.group(1).replace("r#", "")
                        sep = SEPARATOR.match(text, m.end())
                        if sep:
                            expand_path(s, item + sep.end(), prefix + [name], out)
                        else:
                            out.append(prefix + [name])
                    elif text.strip() == "*":
                        out.append(prefix + ["*"])
                    item = k + 1
            return
        if j < len(s) and s[j] == "*":
            out.append(prefix + ["*"])
            return
        m = SEGMENT.match(s, i)
        if not m:
            out.append(prefix)
            return
        prefix = prefix + [m.group(1).replace("r#", "")]
        sep = SEPARATOR.match(s, m.end())
        if not sep or re.match(r"\s*<", s[sep.end():sep.end() + 8]):
            out.append(prefix)
            return
        i = sep.end()


def path_mentions(src):
    """Yield (segments, offset, is_use) for every path `a::b...` in non-test code."""
    s = src.san
    for m in PATH_START.finditer(s):
        if src.in_test(m.start()):
            continue
        out = []
        expand_path(s, m.end(), [m.group(1).replace("r#", "")], out)
        is_use = bool(USE_BEFORE.search(s[max(0, m.start() - 16):m.start()]))
        for segments in out:
            yield segments, m.start(), is_use


def file_imports(sources, prod):
    """Which production file names an item of which other: {(a, b): [line, ...]}.

    A path is resolved from the file it is written in (`crate::`, `self::`, `super::`, a child
    module's name, or a name that file's own `use` brought in) down the module tree as far as
    modules go. When the rest names something a module only re-exports (`pub use b::Thing;` in
    a mod.rs, or an import a child reaches through `super::`), the re-export is followed to the
    file that defines it, so `super::Thing` from a.rs is an import of b.rs, not of the mod.rs.
    """
    modules = {module_of(r): r for r in prod if r != "main.rs"}
    children = {}
    uses = {}  # file -> {name: segments of its `use`}
    mentions = {}
    for rel in prod:
        if rel == "main.rs":
            continue
        src = sources[rel]
        children[rel] = {m.name.replace("r#", "") for m in src.mods if not m.inline}
        found = list(path_mentions(src))
        mentions[rel] = found
        uses[rel] = {segs[-1]: segs for segs, _, is_use in found
                     if is_use and segs[-1] not in ("*", "self")}

    def resolve(rel, segs, depth=0):
        if depth > 8 or not segs:
            return None
        first, rest = segs[0], list(segs[1:])
        current = module_of(rel)
        if first == "crate":
            base = ()
        elif first == "self":
            base = current
        elif first == "super":
            base = current[:-1]
            while rest and rest[0] == "super":
                base, rest = base[:-1], rest[1:]
        elif first in children[rel]:
            base, rest = current, list(segs)
        elif first in uses[rel] and uses[rel][first] != list(segs[:1]):
            return resolve(rel, uses[rel][first] + rest, depth + 1)
        else:
            return None  # another crate, a local name, a type's associated item
        while rest and base + (rest[0],) in modules:
            base, rest = base + (rest[0],), rest[1:]
        if base not in modules:
            return None
        target = modules[base]
        if rest and rest[0] in uses.get(target, {}):
            through = resolve(target, uses[target][rest[0]] + rest[1:], depth + 1)
            if through is not None:
                return through
        return target

    imports = {}
    for rel in sorted(mentions):
        for segs, offset, _ in mentions[rel]:
            target = resolve(rel, segs)
            if target is not None and target != rel:
                imports.setdefault((rel, target), []).append(sources[rel].line(offset))
    return imports


def folder_circles(prod, imports):
    """Import circles among the members of each folder, src/ itself included.

    A folder's members are its files and its subfolders (each standing for every file below
    it); its own mod.rs or lib.rs is the folder, not a member. Member A imports member B when a
    file in A names an item of a file in B. Every strongly connected set of two or more members
    is a circle, printed with, for each import inside it, its first file:line and count.
    """
    folders = {}
    for (a, b), lines in imports.items():
        pa, pb = a[:-3].split(os.sep), b[:-3].split(os.sep)
        # the deepest folder holding both; a file that is its folder's mod.rs sits one higher
        common = 0
        while common < min(len(pa), len(pb)) - 1 and pa[common] == pb[common]:
            common += 1
        ma, mb = pa[common], pb[common]
        if ma == mb or ma in ("mod", "lib") or mb in ("mod", "lib"):
            continue
        folder = os.sep.join(pa[:common]) or "."
        edge = folders.setdefault(folder, {}).setdefault((ma, mb), [])
        edge.append(("%s:%d" % (rel_src(a), min(lines)), len(lines)))
    circles = []
    for folder, edges in sorted(folders.items()):
        graph = {}
        for (a, b) in edges:
            graph.setdefault(a, set()).add(b)
        nodes = set(graph) | {b for bs in graph.values() for b in bs}
        for comp in tarjan(nodes, graph):
            if len(comp) < 2:
                continue
            members = set(comp)
            inside = []
            for (a, b), where in sorted(edges.items()):
                if a in members and b in members:
                    where.sort()
                    inside.append({"from": a, "to": b, "first": where[0][0],
                                   "sites": sum(n for _, n in where)})
            circles.append({"folder": rel_src(folder) if folder != "." else DISPLAY_ROOT[0],
                            "members": comp, "imports": inside})
    return circles


def tarjan(nodes, edges):
    index = {}
    low = {}
    on_stack = set()
    stack = []
    sccs = []
    counter = [0]

    sys.setrecursionlimit(max(1000, 10 * len(nodes) + 100))

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            sccs.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return sccs


# --------------------------------------------------------------------------- functions

FN = re.compile(r"(?<![A-Za-z0-9_$])fn\s+(" + IDENT + r")")


def functions(src):
    """Yield (name, fn line, end line) for every fn with a body outside test modules."""
    s = src.san
    for m in FN.finditer(s):
        if src.in_test(m.start()):
            continue
        depth = 0
        body = None
        for k in range(m.end(), len(s)):
            ch = s[k]
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            elif depth == 0 and ch == ";":
                break  # declaration without a body
            elif depth == 0 and ch == "{":
                body = k
                break
            elif depth == 0 and ch == "}":
                break  # ran out of the enclosing block: not a fn item
        if body is None:
            continue
        close = match_close(s, body)
        if close is None:
            src.problems.append("fn %s at line %d: no closing brace"
                                % (m.group(1), src.line(m.start())))
            continue
        yield m.group(1).replace("r#", ""), src.line(m.start()), src.line(close)


# --------------------------------------------------------------------------- report


def measure(src_root, max_fn):
    DISPLAY_ROOT[0] = src_root
    sources = {}
    for dirpath, dirnames, filenames in os.walk(src_root):
        dirnames.sort()
        for f in sorted(filenames):
            if f.endswith(".rs"):
                full = os.path.join(dirpath, f)
                rel = os.path.relpath(full, src_root)
                sources[rel] = Source(full, rel)

    reach, warnings = resolve_mods(src_root, sources)

    def is_test_file(rel):
        if is_test_name(os.path.basename(rel)) or sources[rel].whole_file_test:
            return True
        return reach.get(rel) == "test"

    for rel in sorted(sources):
        if rel not in reach and rel not in ("lib.rs", "main.rs"):
            warnings.append("%s is not reachable from lib.rs/main.rs through `mod` items; "
                            "counted as %s by its name" % (
                                rel_src(rel),
                                "test" if is_test_file(rel) else "production"))

    prod = sorted(r for r in sources if not is_test_file(r))
    test_files = sorted(r for r in sources if is_test_file(r))

    # 1. import circles, in every folder
    imports = file_imports(sources, prod)
    circles = folder_circles(prod, imports)

    # 2. production lines
    prod_lines = sum(sources[rel].lines - sources[rel].test_lines() for rel in prod)

    # 3. long functions
    long_fns = []
    fn_count = 0
    for rel in prod:
        for name, start, end in functions(sources[rel]):
            fn_count += 1
            length = end - start + 1
            if length > max_fn:
                long_fns.append({"path": rel_src(rel), "line": start, "name": name,
                                 "length": length})
    long_fns.sort(key=lambda f: (-f["length"], f["path"], f["line"]))

    for rel in sorted(sources):
        for p in sources[rel].problems:
            warnings.append("%s: %s" % (rel_src(rel), p))
        if rel in prod and sources[rel].stray_cfg_test:
            warnings.append("%s: #[cfg(test)] on a non-mod item at line(s) %s is counted as "
                            "production code" % (rel_src(rel), ", ".join(
                                str(x) for x in sources[rel].stray_cfg_test)))

    return {
        "src": src_root,
        "limits": {"max_fn": max_fn},
        "files": len(sources),
        "production_files": len(prod),
        "test_files": [rel_src(r) for r in test_files],
        "imports": len(imports),
        "functions_measured": fn_count,
        "circles": circles,
        "long_functions": long_fns,
        "totals": {"all_lines": sum(s.lines for s in sources.values()),
                   "production_lines": prod_lines},
        "warnings": warnings,
    }


def print_text(r):
    lim = r["limits"]
    print("structure of %s: %d .rs files (%d production, %d test), %d file imports, "
          "%d production fns"
          % (r["src"], r["files"], r["production_files"], len(r["test_files"]),
             r["imports"], r["functions_measured"]))
    print()
    if not r["circles"]:
        print("import circles: none")
    else:
        print("import circles: %d" % len(r["circles"]))
        for n, c in enumerate(r["circles"], 1):
            print("  circle %d in %s: %s" % (n, c["folder"], ", ".join(c["members"])))
            w = max(len("%s -> %s" % (e["from"], e["to"])) for e in c["imports"])
            for e in c["imports"]:
                arrow = "%s -> %s" % (e["from"], e["to"])
                print("    %-*s  %s  (%d mention%s)" % (w, arrow, e["first"], e["sites"],
                                                      "" if e["sites"] == 1 else "s"))
    print()
    print("functions over %d lines: %s" % (lim["max_fn"], len(r["long_functions"]) or "none"))
    for f in r["long_functions"]:
        print("  %s:%d %s %d" % (f["path"], f["line"], f["name"], f["length"]))
    print()
    print("totals:")
    print("  all .rs lines under src/: %d" % r["totals"]["all_lines"])
    print("  production lines:         %d" % r["totals"]["production_lines"])
    if r["warnings"]:
        print()
        print("warnings:")
        for w in r["warnings"]:
            print("  " + w)


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", default=os.path.join(os.path.dirname(here), "src"),
                    help="the src/ directory to measure (default: src/ next to scripts/)")
    ap.add_argument("--max-fn", type=int, default=80, help="line limit per function (80)")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 when there is an import circle")
    args = ap.parse_args(argv)
    if not os.path.isdir(args.src):
        ap.error("no such directory: %s" % args.src)
    src = os.path.relpath(args.src) if not os.path.relpath(args.src).startswith("..") else args.src
    report = measure(src, args.max_fn)
    if args.json:
        json.dump(report, sys.stdout, indent=2)
        print()
    else:
        print_text(report)
    if args.check and report["circles"]:
        return 1
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # e.g. piped into head
        sys.stderr.close()
        sys.exit(0)
