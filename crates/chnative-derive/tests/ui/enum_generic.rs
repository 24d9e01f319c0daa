use chnative_derive::Enum;

#[derive(Enum)]
enum Level<T> {
    Low,
    High,
    Other(T),
}

fn main() {}
