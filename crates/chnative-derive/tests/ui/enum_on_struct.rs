use chnative_derive::Enum;

#[derive(Enum)]
struct Level {
    value: i8,
}

fn main() {}
