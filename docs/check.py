#!/usr/bin/env python3
"""Checks the book and README.md against themselves and against the code.

- Every relative link and anchor in the pages resolves; book pages link only inside the book.
- Config keys: the keys the config file's types accept (the `Deserialize` structs of
  crates/sandboxd-config) against the first column of every table headed `key`.
- Routes: the OpenAPI document of a running service against tables headed `route`
  (`METHOD /path`, several methods with commas, `ANY` for every proxied method).
- MCP tools: the service's `tools/list` against tables headed `tool`.
- Metrics: the families of the service's `/metrics` against tables headed `metric`.
- CLI: every command and flag of the binary's `--help` against the synopsis lines (lines of a
  code block starting `sandboxd `; `sandboxd COMMAND ...` lists the flags many commands share).
- Source files: every file a page names in inline code as `sandboxd-CRATE/src/...` (or under
  `crates/`) exists, so a walk through the code (the architecture page's) stays true.

Each direction is checked: what the code has and the pages lack, and what the pages name and the
code lacks. Exits 1 with a list a person can act on.
"""

import argparse
import json
import re
import subprocess
import sys
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BOOK = ROOT / "docs" / "src"
CONFIG_SOURCES = ROOT / "crates" / "sandboxd-config" / "src"
PROXIED = ["GET", "PUT", "POST", "DELETE", "PATCH", "OPTIONS"]
METHODS = PROXIED + ["HEAD"]
# Flags every clap command has, documented once in the command line page's prose.
IMPLICIT_FLAGS = {"-h", "--help", "-V", "--version"}
MAX_HELP_DEPTH = 3

problems = []


def problem(kind, message):
    problems.append((kind, message))


def shown(path):
    """A path as a person finds it: relative to the repository when it is inside."""
    path = Path(path).resolve()
    return path.relative_to(ROOT) if path.is_relative_to(ROOT) else path


# ---- pages ----------------------------------------------------------------------------------

def pages(paths):
    files = []
    for path in paths:
        path = Path(path)
        files.extend(sorted(path.rglob("*.md")) if path.is_dir() else [path])
    return {f: f.read_text() for f in files}


def without_code(text):
    """The text with fenced code blocks and inline code replaced by blanks (links in code are
    examples, not links)."""
    text = re.sub(r"```.*?```", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"`[^`\n]*`", "``", text)


def slug(heading):
    """mdBook's id for a heading."""
    heading = re.sub(r"<[^>]*>", "", heading).strip().lower()
    heading = re.sub(r"[`*_\[\]()]", lambda m: "_" if m.group(0) == "_" else "", heading)
    return "".join(c if c.isalnum() or c in "-_" else "-" if c == " " else "" for c in heading)


def anchors(text):
    """The ids of a page's headings; inline code in a heading is part of its id, as in mdBook."""
    seen = {}
    ids = set()
    fenceless = re.sub(r"```.*?```", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    for line in fenceless.splitlines():
        match = re.match(r"#{1,6}\s+(.*)", line)
        if match:
            base = slug(match.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            ids.add(base if count == 0 else f"{base}-{count}")
    return ids


def check_links(docs):
    for page, text in docs.items():
        for target in re.findall(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", without_code(text)):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page.resolve()
            where = f"{shown(page)}: link {target!r}"
            if not resolved.exists():
                problem("links", f"{where}: no file {shown(resolved)}")
                continue
            if page.resolve().is_relative_to(BOOK) and not resolved.is_relative_to(BOOK):
                problem("links", f"{where}: leaves the book (it breaks in the HTML); name the file in code instead")
                continue
            if anchor and resolved.suffix == ".md" and anchor not in anchors(resolved.read_text()):
                problem("links", f"{where}: no heading with id #{anchor} in {resolved.name}")


def table_first_cells(docs, header):
    """(page, first cell) of each row of every table whose first column is headed `header`."""
    for page, text in docs.items():
        rows = None
        for line in text.splitlines():
            if not line.startswith("|"):
                rows = None
                continue
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if rows is None:
                rows = cells[0].lower() == header
                continue
            if rows and not re.fullmatch(r":?-+:?", cells[0]):
                yield page, cells[0]


def documented_names(docs, header, pattern):
    names = {}
    for page, cell in table_first_cells(docs, header):
        for name in re.findall(r"`([^`]+)`", cell):
            if re.fullmatch(pattern, name):
                names.setdefault(name, page)
    return names


def compare(kind, in_code, documented, where, what):
    for name in sorted(set(in_code) - set(documented)):
        problem(kind, f"{name}: {what} not documented; add a row to a `{where}` table")
    for name in sorted(set(documented) - set(in_code)):
        page = documented[name]
        problem(kind, f"{name}: documented in {shown(page)} but the code has no such {what}")


# ---- config keys ----------------------------------------------------------------------------

def config_structs():
    """Each `Deserialize` struct of the config crate: its fields as (key, type, flatten)."""
    structs = {}
    for source in CONFIG_SOURCES.glob("*.rs"):
        text = source.read_text()
        pattern = r"#\[derive\([^)]*Deserialize[^)]*\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([^)]*\))?\s+)?struct\s+(\w+)\s*\{(.*?)\n\}"
        for name, body in re.findall(pattern, text, flags=re.S):
            fields = []
            attributes = ""
            for line in body.splitlines():
                line = line.strip()
                if line.startswith("#["):
                    attributes += line
                    continue
                match = re.match(r"(?:pub(?:\([^)]*\))?\s+)?(\w+):\s*(.+?),?$", line)
                if match:
                    renamed = re.search(r'rename\s*=\s*"([^"]+)"', attributes)
                    key = renamed.group(1) if renamed else match.group(1)
                    fields.append((key, match.group(2), "flatten" in attributes))
                attributes = ""
            structs[name] = fields
    return structs


def config_keys():
    structs = config_structs()
    if "ConfigFile" not in structs:
        problem("config", f"no `struct ConfigFile` in {shown(CONFIG_SOURCES)}: has the config moved?")
        return set()
    keys = set()

    def walk(struct, prefix, depth):
        for key, rust_type, flatten in structs[struct]:
            rust_type = re.sub(r"^Option<(.*)>$", r"\1", rust_type.replace(" ", ""))
            inner = rust_type.split("::")[-1]
            mapped = re.fullmatch(r"BTreeMap<String,(?:\w+::)*(\w+)>", rust_type)
            if flatten and inner in structs:
                walk(inner, prefix, depth + 1)
            elif mapped and mapped.group(1) in structs:
                walk(mapped.group(1), f"{prefix}{key}.NAME.", depth + 1)
            elif inner in structs and depth < 4:
                walk(inner, f"{prefix}{key}.", depth + 1)
            else:
                keys.add(prefix + key)

    walk("ConfigFile", "", 0)
    return keys


def default_toml_keys(known):
    """The keys the embedded default sets, with map entries as NAME; a table that is itself a
    known key (a map of names to values, like `e2b.templates`) is that key."""
    import tomllib
    data = tomllib.loads((CONFIG_SOURCES / "default.toml").read_text())
    keys = set()

    def walk(table, prefix):
        for key, value in table.items():
            if isinstance(value, dict) and prefix + key in known:
                keys.add(prefix + key)
            elif isinstance(value, dict):
                if key in ("runtimes", "recipes", "tenants", "secrets") and not prefix:
                    for entry in value.values():
                        walk(entry, f"{key}.NAME.")
                else:
                    walk(value, f"{prefix}{key}.")
            else:
                keys.add(prefix + key)

    walk(data, "")
    return keys


# ---- the service ----------------------------------------------------------------------------

def fetch(url, token, body=None, headers=()):
    request = urllib.request.Request(url, data=body, headers={"Authorization": f"Bearer {token}", **dict(headers)})
    with urllib.request.urlopen(request, timeout=30) as answer:
        return answer.headers, answer.read().decode()


def openapi_routes(url, token):
    _, body = fetch(f"{url}/v1/openapi.json", token)
    routes = set()
    for path, item in json.loads(body)["paths"].items():
        for method in item:
            if method.upper() in METHODS:
                routes.add(f"{method.upper()} {path}")
    return routes


def documented_routes(docs):
    routes = {}
    for page, cell in table_first_cells(docs, "route"):
        for text in re.findall(r"`([^`]+)`", cell):
            match = re.fullmatch(r"((?:[A-Z]+)(?:,\s*[A-Z]+)*)\s+(/\S*)", text)
            if not match:
                continue
            path = match.group(2).split("?")[0]
            for method in re.split(r",\s*", match.group(1)):
                for each in PROXIED if method == "ANY" else [method]:
                    routes.setdefault(f"{each} {path}", page)
    return routes


def mcp_tools(url, token):
    json_rpc = (("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream"))

    def call(message, session=None):
        headers = json_rpc + ((("Mcp-Session-Id", session),) if session else ())
        answer_headers, body = fetch(f"{url}/mcp", token, json.dumps(message).encode(), headers)
        data = [line[5:].strip() for line in body.splitlines() if line.startswith("data:")]
        results = [json.loads(d) for d in data if d.startswith("{")]
        return answer_headers.get("Mcp-Session-Id"), results

    session, _ = call({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "docs-check", "version": "1"}}})
    call({"jsonrpc": "2.0", "method": "notifications/initialized"}, session)
    _, results = call({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, session)
    fetch_end = urllib.request.Request(f"{url}/mcp", method="DELETE", headers={"Authorization": f"Bearer {token}", "Mcp-Session-Id": session or ""})
    urllib.request.urlopen(fetch_end, timeout=30).close()
    return {tool["name"] for result in results for tool in result["result"]["tools"]}


def metric_families(url, token):
    _, body = fetch(f"{url}/metrics", token)
    return set(re.findall(r"^# TYPE (\S+)", body, flags=re.M))


# ---- the command line -----------------------------------------------------------------------

def flags_in(text):
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*|-[a-zA-Z])\b", text))


def help_tree(binary, path=(), depth=0):
    """{command path: (its flags, each a set of its spellings, e.g. {"-e", "--env"}; whether it
    has subcommands)}, from each command's --help."""
    text = subprocess.run([binary, *path, "--help"], capture_output=True, text=True, check=True).stdout
    section = None
    flags, children = [], []
    for line in text.splitlines():
        if re.match(r"^\S.*:$", line):
            section = line[:-1]
        elif section == "Commands" and (match := re.match(r"^  ([a-z][a-z0-9-]*)\s", line)):
            if match.group(1) != "help":
                children.append(match.group(1))
        elif section == "Options" and (match := re.match(r"^\s+(-\S.*?)(?:\s{2,}|$)", line)):
            spellings = frozenset(flags_in(match.group(1)))
            if spellings and not spellings & IMPLICIT_FLAGS:
                flags.append(spellings)
    tree = {path: (flags, bool(children))}
    if depth < MAX_HELP_DEPTH:
        for child in children:
            tree.update(help_tree(binary, (*path, child), depth + 1))
    return tree


def synopses(docs):
    """(page, command path, flags) of each synopsis line in a code block."""
    for page, text in docs.items():
        for block in re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S):
            lines = []
            for line in block.splitlines():
                if line.startswith("sandboxd "):
                    lines.append(line)
                elif lines and re.match(r"\s+\[", line):
                    lines[-1] += " " + line.strip()
            for line in lines:
                words = line.split(" #")[0].split()[1:]
                # After `--` comes the command run in the sandbox, with flags of its own.
                own = words[: words.index("--")] if "--" in words else words
                yield page, words, flags_in(" ".join(own))


def check_cli(binary, docs):
    tree = help_tree(binary)
    commands = {path for path in tree if path}
    documented = {}
    shared = set()
    for page, words, flags in synopses(docs):
        if words and words[0] == "COMMAND":
            shared |= flags
            continue
        path = ()
        for word in words:
            if (*path, word) in commands:
                path = (*path, word)
            else:
                break
        if not path:
            continue
        documented.setdefault(path, [page, set()])[1].update(flags)
    all_flags = {spelling for flags, _ in tree.values() for group in flags for spelling in group}
    for flag in sorted(shared - all_flags):
        problem("cli", f"sandboxd COMMAND {flag}: documented as a shared flag but no command has it")
    for path in sorted(commands):
        name = "sandboxd " + " ".join(path)
        flags, has_children = tree[path]
        if path not in documented:
            if not has_children or any(not group & shared for group in flags):
                problem("cli", f"{name}: no synopsis line (a line `{name} ...` in a code block of the command line page)")
            continue
        page, written = documented[path]
        for group in flags:
            if not group & (written | shared):
                problem("cli", f"{name}: flag {' / '.join(sorted(group))} not in its synopsis")
        for flag in sorted(written - {spelling for group in flags for spelling in group}):
            problem("cli", f"{name}: the synopsis in {shown(page)} names {flag}, which the command does not take")


# ---- main -----------------------------------------------------------------------------------

SOURCE_PATH = re.compile(r"`(?:crates/)?(sandboxd(?:-[a-z-]+)?/(?:src|tests)/[A-Za-z0-9_/.-]+\.rs)")


def check_source_paths(docs):
    for page, text in docs.items():
        for path in sorted(set(SOURCE_PATH.findall(text))):
            if not (ROOT / "crates" / path).is_file():
                problem("source", f"{shown(page)} names {path}, which is not a file under crates/")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", nargs="+", default=[ROOT / "README.md", BOOK], help="pages to check (default: README.md and docs/src)")
    parser.add_argument("--binary", required=True, help="the sandboxd binary, for --help")
    parser.add_argument("--url", required=True, help="a running service, for its OpenAPI document, MCP tools and metrics")
    parser.add_argument("--token-file", required=True)
    args = parser.parse_args()
    docs = pages(args.docs)
    token = Path(args.token_file).read_text().strip()

    check_links(docs)
    check_source_paths(docs)
    keys = config_keys()
    for key in sorted(default_toml_keys(keys) - keys):
        problem("config", f"{key}: set in default.toml but not found in the config types by this checker: fix docs/check.py")
    compare("config", keys, documented_names(docs, "key", r"[a-z_][a-z0-9_]*(\.[A-Za-z0-9_]+)*"), "key", "config key")
    compare("routes", openapi_routes(args.url, token), documented_routes(docs), "route", "route")
    compare("mcp", mcp_tools(args.url, token), documented_names(docs, "tool", r"[a-z_]+"), "tool", "MCP tool")
    compare("metrics", metric_families(args.url, token), documented_names(docs, "metric", r"[a-z_:]+"), "metric", "metric")
    check_cli(args.binary, docs)

    for kind, message in problems:
        print(f"{kind}: {message}")
    if problems:
        print(f"\n{len(problems)} problems in the documentation (see docs/check.py for what each check reads)")
        return 1
    print(f"docs check: {len(docs)} pages; links, source paths, config keys, routes, MCP tools, metrics and CLI flags agree with the code")
    return 0


if __name__ == "__main__":
    sys.exit(main())
