use chnative_derive::Row;

#[derive(Row)]
struct Generic<T> {
    value: T,
}

fn main() {}
