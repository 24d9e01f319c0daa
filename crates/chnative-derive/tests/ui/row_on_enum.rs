use chnative_derive::Row;

#[derive(Row)]
enum NotAStruct {
    A,
}

fn main() {}
