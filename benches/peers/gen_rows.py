#!/usr/bin/env python3
"""Writes src/rows.rs (the hits row structs of the row-based peers) from hits_columns.tsv."""
import os

here = os.path.dirname(os.path.abspath(__file__))
rows = [l.rstrip('\n').split('\t') for l in open(os.path.join(here, 'hits_columns.tsv')) if not l.startswith('#')]
cols = [(r[0], r[1]) for r in rows]
OFFICIAL = {'Int16': 'i16', 'Int32': 'i32', 'Int64': 'i64', 'String': "&'a str", 'Date': 'u16', 'DateTime': 'u32'}
KLICK = {'Int16': 'i16', 'Int32': 'i32', 'Int64': 'i64', 'String': 'String', 'Date': 'klickhouse::Date',
         'DateTime': 'klickhouse::DateTime'}
ACC = {'Int16': 'i16', 'Int32': 'i32', 'Int64': 'i64', 'String': 'str', 'Date': 'date', 'DateTime': 'datetime'}
def widen(n, t):
    """The checksum term of a fixed-width field: sign-extended to 64 bits (Int64 already is)."""
    return f"self.{n} as u64" if t == 'Int64' else f"self.{n} as i64 as u64"


o = []
o.append("//! Row types of the hits table for the row-based peers, generated from\n"
         "//! `hits_columns.tsv` by `gen_rows.py` (rerun it if the schema changes).\n#![allow(non_snake_case)]\n")
o.append("use crate::hits::HitsData;\n")
o.append("/// The official crate's row: borrowed strings, Date as days, DateTime as seconds.")
o.append("#[derive(clickhouse::Row, serde::Serialize, serde::Deserialize)]\npub struct OfficialRow<'a> {")
for n, t in cols:
    if t == 'String':
        o.append("    #[serde(borrow)]")
    o.append(f"    pub {n}: {OFFICIAL[t]},")
o.append("}\n")
o.append("impl<'a> OfficialRow<'a> {\n    /// Adds every value into the bench checksum.\n"
         "    pub fn checksum(&self) -> u64 {\n        let mut s = 0u64;")
for n, t in cols:
    if t == 'String':
        o.append(f"        s = s.wrapping_add(self.{n}.len() as u64);")
    else:
        o.append(f"        s = s.wrapping_add({widen(n, t)});")
o.append("        s\n    }\n")
o.append("    /// Row `i` of the columns, borrowing their strings.\n"
         "    pub fn of(d: &'a HitsData, i: usize) -> Self {\n        OfficialRow {")
for k, (n, t) in enumerate(cols):
    o.append(f"            {n}: d.{ACC[t]}({k})[i]{'.as_str()' if t == 'String' else ''},")
o.append("        }\n    }\n}\n")
o.append("/// klickhouse's row: owned strings and its own Date/DateTime types.")
o.append("#[derive(klickhouse::Row, Clone)]\npub struct KlickRow {")
for n, t in cols:
    o.append(f"    pub {n}: {KLICK[t]},")
o.append("}\n")
o.append("impl KlickRow {\n    /// Adds every value into the bench checksum.\n"
         "    pub fn checksum(&self) -> u64 {\n        let mut s = 0u64;")
for n, t in cols:
    if t == 'String':
        o.append(f"        s = s.wrapping_add(self.{n}.len() as u64);")
    elif t == 'Date':
        o.append(f"        s = s.wrapping_add(self.{n}.0 as u64);")
    elif t == 'DateTime':
        o.append(f"        s = s.wrapping_add(self.{n}.1 as u64);")
    else:
        o.append(f"        s = s.wrapping_add({widen(n, t)});")
o.append("        s\n    }\n")
o.append("    /// Row `i` of the columns, copied.\n    pub fn of(d: &HitsData, i: usize) -> Self {\n        KlickRow {")
for k, (n, t) in enumerate(cols):
    v = {'String': f"d.str({k})[i].clone()", 'Date': f"klickhouse::Date(d.date({k})[i])",
         'DateTime': f"klickhouse::DateTime(chrono_tz::UTC, d.datetime({k})[i])"}.get(t, f"d.{ACC[t]}({k})[i]")
    o.append(f"            {n}: {v},")
o.append("        }\n    }\n}")
open(os.path.join(here, 'src', 'rows.rs'), 'w').write('\n'.join(o) + '\n')

# chnative's typed rows (src/ch_rows.rs): owned and borrowed strings, Date as days, DateTime as seconds.
CH = {'Int16': 'i16', 'Int32': 'i32', 'Int64': 'i64', 'Date': 'u16', 'DateTime': 'u32'}
o = ["//! chnative's typed rows of the hits table, generated from `hits_columns.tsv` by\n"
     "//! `gen_rows.py` (rerun it if the schema changes).\n#![allow(non_snake_case)]\n",
     "use crate::hits::HitsData;\n"]
for name, life, s in [('ChOwned', '', 'String'), ('ChBorrowed', "<'a>", "&'a str")]:
    o.append(f"/// chnative typed row with {'owned' if life == '' else 'borrowed'} strings.")
    o.append(f"#[derive(chnative::Row)]\npub struct {name}{life} {{")
    for n, t in cols:
        o.append(f"    pub {n}: {s if t == 'String' else CH[t]},")
    o.append("}\n")
    o.append(f"impl{life} {name}{life} {{\n    /// Adds every value into the bench checksum.\n"
             "    pub fn checksum(&self) -> u64 {\n        let mut s = 0u64;")
    for n, t in cols:
        if t == 'String':
            o.append(f"        s = s.wrapping_add(self.{n}.len() as u64);")
        else:
            o.append(f"        s = s.wrapping_add({widen(n, t)});")
    o.append("        s\n    }\n}\n")
o.append("impl<'a> ChBorrowed<'a> {\n    /// Row `i` of the columns, borrowing their strings.\n"
         "    pub fn of(d: &'a HitsData, i: usize) -> Self {\n        ChBorrowed {")
for k, (n, t) in enumerate(cols):
    o.append(f"            {n}: d.{ACC[t]}({k})[i]{'.as_str()' if t == 'String' else ''},")
o.append("        }\n    }\n")
o.append("    /// The same row, borrowing an owned one's strings (for the tiers bin).\n"
         "    #[allow(dead_code)]\n"
         "    pub fn from_owned(r: &'a ChOwned) -> Self {\n        ChBorrowed {")
for n, t in cols:
    o.append(f"            {n}: {'&r.' + n if t == 'String' else 'r.' + n},")
o.append("        }\n    }\n}")
open(os.path.join(here, 'src', 'ch_rows.rs'), 'w').write('\n'.join(o) + '\n')
