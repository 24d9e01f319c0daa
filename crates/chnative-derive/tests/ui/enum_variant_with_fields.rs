use chnative_derive::Enum;

#[derive(Enum)]
enum Level {
    Low,
    Custom(i8),
}

fn main() {}
