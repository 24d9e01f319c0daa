use chnative_derive::Variant;

#[derive(Variant)]
enum Either<T> {
    Left(T),
    Right(String),
}

fn main() {}
