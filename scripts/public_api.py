#!/usr/bin/env python3
"""The public API of the published crates as sorted text, one item a line.

    scripts/public_api.py check    # compare with api/<crate>.txt; non-zero on a difference
    scripts/public_api.py update   # rewrite api/<crate>.txt

Each crate's rustdoc JSON (`cargo +nightly rustdoc -- -Z unstable-options --output-format
json`, all features) is walked from the crate root through public modules and re-exports;
every reachable item is printed with its path, and functions with their signatures. Methods
of inherent impls, trait impls (auto traits included: Send, Sync, Unpin) and enum variants
are listed too, so a change of the API shows as a diff of api/<crate>.txt in review.

Only the toolchain is needed (nightly, for the JSON output); CARGO_TARGET_DIR is honoured.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CRATES = ["chnative-proto", "chnative", "chnative-derive", "chnative-arrow", "chnative-adbc", "chnative-datafusion"]
# chnative-cli is a binary (no library API).


def target_dir():
    env = os.environ.get("CARGO_TARGET_DIR")
    return Path(env) if env else ROOT / "target"


def rustdoc_json(crate):
    cmd = ["cargo", "+nightly", "rustdoc", "--quiet", "--locked", "-p", crate, "--lib", "--all-features",
           "--", "-Z", "unstable-options", "--output-format", "json"]
    subprocess.run(cmd, cwd=ROOT, check=True)
    return json.loads((target_dir() / "doc" / (crate.replace("-", "_") + ".json")).read_text())


class Api:
    def __init__(self, doc):
        self.doc = doc
        self.index = doc["index"]
        self.lines = set()
        self.seen = set()

    # -- types -------------------------------------------------------------------------------
    def args(self, args):
        if not args:
            return ""
        if "angle_bracketed" in args:
            ab = args["angle_bracketed"]
            parts = []
            for a in ab.get("args", []):
                if "type" in a:
                    parts.append(self.ty(a["type"]))
                elif "lifetime" in a:
                    parts.append(a["lifetime"])
                elif "const" in a:
                    c = a["const"]
                    parts.append(c.get("expr", "_") if isinstance(c, dict) else str(c))
                else:
                    parts.append("_")
            for c in ab.get("constraints", ab.get("bindings", [])):
                b = c.get("binding", {})
                if "equality" in b:
                    eq = b["equality"]
                    parts.append(f"{c['name']} = {self.ty(eq['type']) if 'type' in eq else eq}")
                else:
                    parts.append(f"{c['name']}: {self.bounds(b.get('constraint', []))}")
            return "<" + ", ".join(parts) + ">" if parts else ""
        if "parenthesized" in args:
            p = args["parenthesized"]
            out = "(" + ", ".join(self.ty(t) for t in p.get("inputs", [])) + ")"
            if p.get("output"):
                out += " -> " + self.ty(p["output"])
            return out
        return ""

    def path(self, p):
        name = p.get("path") or p.get("name") or "?"
        return name + self.args(p.get("args"))

    def bounds(self, bounds):
        out = []
        for b in bounds:
            if "trait_bound" in b:
                tb = b["trait_bound"]
                mod = {"maybe": "?", "maybe_const": "~const "}.get(tb.get("modifier"), "")
                out.append(mod + self.path(tb["trait"]))
            elif "outlives" in b:
                out.append(b["outlives"])
            elif "use" in b:
                out.append("use<" + ", ".join(str(x) for x in b["use"]) + ">")
        return " + ".join(out)

    def ty(self, t):
        if t is None:
            return "()"
        if isinstance(t, str):
            return "_" if t == "infer" else t
        (k, v), = t.items()
        if k == "resolved_path":
            return self.path(v)
        if k in ("generic", "primitive"):
            return v
        if k == "borrowed_ref":
            lt = (v["lifetime"] + " ") if v.get("lifetime") else ""
            return "&" + lt + ("mut " if v.get("is_mutable") else "") + self.ty(v["type"])
        if k == "slice":
            return "[" + self.ty(v) + "]"
        if k == "array":
            return f"[{self.ty(v['type'])}; {v['len']}]"
        if k == "tuple":
            return "(" + ", ".join(self.ty(x) for x in v) + ("," if len(v) == 1 else "") + ")"
        if k == "raw_pointer":
            return ("*mut " if v.get("is_mutable") else "*const ") + self.ty(v["type"])
        if k == "impl_trait":
            return "impl " + self.bounds(v)
        if k == "dyn_trait":
            parts = [self.path(x["trait"]) for x in v.get("traits", [])]
            if v.get("lifetime"):
                parts.append(v["lifetime"])
            return "dyn " + " + ".join(parts)
        if k == "qualified_path":
            trait = self.path(v["trait"]) if v.get("trait") else None
            base = f"<{self.ty(v['self_type'])} as {trait}>" if trait else self.ty(v["self_type"])
            return f"{base}::{v['name']}{self.args(v.get('args'))}"
        if k == "function_pointer":
            sig = v.get("sig", v.get("decl", {}))
            return "fn(" + ", ".join(self.ty(x[1]) for x in sig.get("inputs", [])) + ")" + (
                " -> " + self.ty(sig["output"]) if sig.get("output") else "")
        if k == "pat":
            return self.ty(v.get("type"))
        return k

    def generics(self, g):
        if not g:
            return "", ""
        params = []
        for p in g.get("params", []):
            kind = p.get("kind", {})
            if "lifetime" in kind:
                out = kind["lifetime"].get("outlives", [])
                params.append(p["name"] + (": " + " + ".join(out) if out else ""))
            elif "type" in kind:
                if kind["type"].get("is_synthetic"):
                    continue
                b = self.bounds(kind["type"].get("bounds", []))
                params.append(p["name"] + (": " + b if b else ""))
            elif "const" in kind:
                params.append(f"const {p['name']}: {self.ty(kind['const']['type'])}")
        where = []
        for w in g.get("where_predicates", []):
            if "bound_predicate" in w:
                bp = w["bound_predicate"]
                where.append(f"{self.ty(bp['type'])}: {self.bounds(bp.get('bounds', []))}")
            elif "lifetime_predicate" in w:
                lp = w["lifetime_predicate"]
                where.append(f"{lp['lifetime']}: {' + '.join(lp.get('outlives', []))}")
        return ("<" + ", ".join(params) + ">" if params else ""), (" where " + ", ".join(where) if where else "")

    def fn_sig(self, name, f):
        h = f.get("header", {})
        pre = "".join(w for flag, w in (("is_const", "const "), ("is_async", "async "), ("is_unsafe", "unsafe "))
                      if h.get(flag))
        gp, wh = self.generics(f.get("generics"))
        sig = f.get("sig", f.get("decl", {}))
        ins = []
        for n, t in sig.get("inputs", []):
            ins.append("self" if n == "self" and t == {"generic": "Self"} else
                       ("&self" if n == "self" and t.get("borrowed_ref", {}).get("type") == {"generic": "Self"}
                        and not t["borrowed_ref"].get("is_mutable") and not t["borrowed_ref"].get("lifetime") else
                        ("&mut self" if n == "self" and t.get("borrowed_ref", {}).get("type") == {"generic": "Self"}
                         and not t["borrowed_ref"].get("lifetime") else f"{n}: {self.ty(t)}")))
        out = " -> " + self.ty(sig["output"]) if sig.get("output") else ""
        return f"{pre}fn {name}{gp}({', '.join(ins)}){out}{wh}"

    # -- items -------------------------------------------------------------------------------
    def add(self, line):
        self.lines.add(line)

    def item(self, id_, path):
        it = self.index.get(str(id_))
        if it is None:
            return
        key = (str(id_), path)
        if key in self.seen:
            return
        self.seen.add(key)
        (kind, v), = it["inner"].items()
        if kind == "module":
            self.add(f"pub mod {path}")
            for child in v["items"]:
                self.child(child, path)
        elif kind == "function":
            self.add(f"pub {self.fn_sig(path, v)}")
        elif kind in ("struct", "enum", "union"):
            gp, wh = self.generics(v.get("generics"))
            self.add(f"pub {kind} {path}{gp}{wh}")
            if kind == "struct":
                sk = v.get("kind")
                if isinstance(sk, dict) and "plain" in sk:
                    for f in sk["plain"].get("fields", []):
                        self.field(f, path)
                elif isinstance(sk, dict) and "tuple" in sk:
                    for i, f in enumerate(sk["tuple"]):
                        if f is not None:
                            self.add(f"pub {path}.{i}: {self.ty(self.index[str(f)]['inner']['struct_field'])}")
            elif kind == "union":
                for f in v.get("fields", []):
                    self.field(f, path)
            else:
                if v.get("has_stripped_variants"):
                    self.add(f"pub enum {path}: some variants hidden")
                for var in v.get("variants", []):
                    self.variant(var, path)
            for imp in v.get("impls", []):
                self.impl(imp, path)
        elif kind == "trait":
            gp, wh = self.generics(v.get("generics"))
            b = self.bounds(v.get("bounds", []))
            unsafe = "unsafe " if v.get("is_unsafe") else ""
            self.add(f"pub {unsafe}trait {path}{gp}{': ' + b if b else ''}{wh}")
            for m in v.get("items", []):
                self.assoc(m, path)
            for imp in v.get("implementations", []):
                ii = self.index.get(str(imp))
                if ii and not ii["inner"]["impl"].get("blanket_impl"):
                    self.add(f"impl {path} for {self.ty(ii['inner']['impl']['for'])}")
        elif kind == "type_alias":
            gp, _ = self.generics(v.get("generics"))
            self.add(f"pub type {path}{gp} = {self.ty(v['type'])}")
        elif kind == "constant":
            t = v.get("type")
            self.add(f"pub const {path}: {self.ty(t)}")
        elif kind == "static":
            self.add(f"pub static {'mut ' if v.get('is_mutable') else ''}{path}: {self.ty(v['type'])}")
        elif kind == "macro":
            self.add(f"pub macro {path}!")
        elif kind == "proc_macro":
            k = v.get("kind", "derive")
            self.add(f"pub proc_macro {k} {path}" + (" helpers(" + ", ".join(v["helpers"]) + ")" if v.get("helpers") else ""))
        else:
            self.add(f"pub {kind} {path}")

    def child(self, child, parent):
        it = self.index.get(str(child))
        if it is None:
            return
        (kind, v), = it["inner"].items()
        if kind == "use":
            if v.get("is_glob"):
                target = self.index.get(str(v.get("id")))
                if target is not None and "module" in target["inner"]:
                    for c in target["inner"]["module"]["items"]:
                        self.child(c, parent)
                else:
                    self.add(f"pub use {parent}::* = {v['source']}::*")
                return
            name = v["name"]
            if v.get("id") is not None and str(v["id"]) in self.index:
                self.item(v["id"], f"{parent}::{name}")
            else:
                self.add(f"pub use {parent}::{name} = {v['source']}")
            return
        if it.get("visibility") != "public" and kind != "impl":
            return
        if it.get("name") is None:
            return
        self.item(child, f"{parent}::{it['name']}")

    def field(self, f, path):
        fi = self.index.get(str(f))
        if fi and fi.get("visibility") == "public":
            self.add(f"pub {path}.{fi['name']}: {self.ty(fi['inner']['struct_field'])}")

    def variant(self, var, path):
        vi = self.index[str(var)]
        vk = vi["inner"]["variant"]["kind"]
        name = f"{path}::{vi['name']}"
        if vk == "plain":
            self.add(f"variant {name}")
        elif "tuple" in vk:
            tys = [self.ty(self.index[str(f)]["inner"]["struct_field"]) if f is not None else "_" for f in vk["tuple"]]
            self.add(f"variant {name}({', '.join(tys)})")
        else:
            fields = []
            for f in vk["struct"]["fields"]:
                fi = self.index[str(f)]
                fields.append(f"{fi['name']}: {self.ty(fi['inner']['struct_field'])}")
            hidden = ", .." if vk["struct"].get("has_stripped_fields") else ""
            self.add(f"variant {name} {{ {', '.join(fields)}{hidden} }}")

    def assoc(self, m, path):
        mi = self.index.get(str(m))
        if mi is None:
            return
        (kind, v), = mi["inner"].items()
        name = f"{path}::{mi['name']}"
        if kind == "function":
            self.add(f"pub {self.fn_sig(name, v)}")
        elif kind == "assoc_const":
            self.add(f"pub const {name}: {self.ty(v.get('type'))}")
        elif kind == "assoc_type":
            b = self.bounds(v.get("bounds", []))
            self.add(f"pub type {name}{': ' + b if b else ''}" + (f" = {self.ty(v['type'])}" if v.get("type") else ""))

    def impl(self, imp, path):
        ii = self.index.get(str(imp))
        if ii is None:
            return
        v = ii["inner"]["impl"]
        if v.get("blanket_impl") is not None:
            return
        gp, wh = self.generics(v.get("generics"))
        if v.get("trait") is None:
            for m in v.get("items", []):
                mi = self.index.get(str(m))
                if mi and mi.get("visibility") == "public":
                    self.assoc(m, path)
            return
        neg = "!" if v.get("is_negative") else ""
        unsafe = "unsafe " if v.get("is_unsafe") else ""
        # The implementing type by its public path (its own name may stand in several modules).
        self.add(f"{unsafe}impl{gp} {neg}{self.path(v['trait'])} for {path}{wh}")


def render(crate):
    doc = rustdoc_json(crate)
    api = Api(doc)
    root = doc["root"]
    name = doc["index"][str(root)]["name"]
    api.add(f"pub mod {name}")
    for child in doc["index"][str(root)]["inner"]["module"]["items"]:
        api.child(child, name)
    return "".join(line + "\n" for line in sorted(api.lines))


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "check"
    if mode not in ("check", "update"):
        sys.exit("usage: scripts/public_api.py [check|update]")
    crates = sys.argv[2:] or CRATES
    changed = []
    for crate in crates:
        text = render(crate)
        snap = ROOT / "api" / f"{crate}.txt"
        if mode == "update":
            snap.parent.mkdir(exist_ok=True)
            snap.write_text(text)
            print(f"wrote {snap.relative_to(ROOT)} ({text.count(chr(10))} items)")
            continue
        old = snap.read_text() if snap.exists() else ""
        if old != text:
            import difflib
            sys.stdout.writelines(difflib.unified_diff(old.splitlines(True), text.splitlines(True),
                                                       f"api/{crate}.txt (checked in)", f"{crate} (this tree)"))
            changed.append(crate)
    if changed:
        print(f"\nThe public API of {', '.join(changed)} differs from api/*.txt (diff above). If the change is "
              "meant, run `scripts/public_api.py update` and commit api/*.txt with it.")
        sys.exit(1)


if __name__ == "__main__":
    main()
