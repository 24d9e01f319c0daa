use chnative_derive::Variant;

#[derive(Variant)]
enum Either {
    Number(u64),
    Pair(u64, String),
}

fn main() {}
