use chnative_derive::Enum;

#[derive(Enum)]
enum Level {
    #[row(label = "low")]
    Low,
}

fn main() {}
