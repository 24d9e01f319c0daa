use chnative_derive::Row;

#[derive(Row)]
#[row(crate = "not a path")]
struct Event {
    id: u64,
}

fn main() {}
