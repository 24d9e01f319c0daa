use chnative_derive::Row;

#[derive(Row)]
struct Pair(u64, String);

fn main() {}
