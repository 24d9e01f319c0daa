use chnative_derive::Variant;

#[derive(Variant)]
struct Either {
    left: u64,
}

fn main() {}
