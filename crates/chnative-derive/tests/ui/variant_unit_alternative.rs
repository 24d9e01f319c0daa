use chnative_derive::Variant;

#[derive(Variant)]
enum Either {
    Number(u64),
    Nothing,
}

fn main() {}
