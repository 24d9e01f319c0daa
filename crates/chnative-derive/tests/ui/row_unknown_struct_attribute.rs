use chnative_derive::Row;

#[derive(Row)]
#[row(skip_unknown)]
struct Event {
    id: u64,
}

fn main() {}
