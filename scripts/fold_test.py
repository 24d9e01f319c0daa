#!/usr/bin/env python3
"""Folds a stand-alone integration test file into its crate's single test binary.

    scripts/fold_test.py crates/chnative/tests/foo.rs

Moves tests/foo.rs to tests/it/foo.rs with `git mv` (history kept), declares `mod foo;` in
tests/it/main.rs, and turns the file's own `mod common;` (and `common_proxy`, `common_tls`,
the `#[path = "common/fake_server.rs"]` module) into `use crate::…;` lines.

Check by hand afterwards: a `#[global_allocator]` of the file must go (use
`chnative_testkit::alloc`, whose counters are per thread), packet builders should come from
`chnative_testkit::packets`, and a test that re-runs its own binary by test name needs the
module prefix (`foo::the_test`). The binary's tests run in parallel: a test that kills,
restarts or reconfigures a server, or counts every socket or query of one, must use a server
of its own (`common::own_server::OwnServer`), and one that captures tracing output a
subscriber of its own thread (`tracing::subscriber::set_default`), not the global one.
"""
import re
import subprocess
import sys
from pathlib import Path


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    src = Path(sys.argv[1])
    binary = "it"
    name = src.stem
    dest = src.parent / binary / src.name
    subprocess.run(["git", "mv", str(src), str(dest)], check=True)
    s = dest.read_text()
    for m in ("common", "common_proxy", "common_tls"):
        s = re.sub(rf"^mod {m};\n", f"use crate::{m};\n", s, flags=re.M)
    s = re.sub(r'^#\[path = "common/fake_server.rs"\]\nmod fake_server;\n', "use crate::common::fake_server;\n", s,
               flags=re.M)
    dest.write_text(s)
    main_rs = src.parent / binary / "main.rs"
    text = main_rs.read_text()
    mods = re.findall(r"^mod (\w+);\n", text, flags=re.M)
    helpers = {"common", "common_proxy", "common_tls"}
    tests = sorted(set(m for m in mods if m not in helpers) | {name})
    head = re.sub(r"^mod (\w+);\n", lambda m: m.group(0) if m.group(1) in helpers else "", text, flags=re.M)
    main_rs.write_text(head.rstrip("\n") + "\n\n" + "".join(f"mod {t};\n" for t in tests))
    print(f"{src} -> {dest}; `mod {name};` in {main_rs}")
    if "global_allocator" in s:
        print("note: the file has its own #[global_allocator]; use chnative_testkit::alloc instead")


if __name__ == "__main__":
    main()
