use chnative_derive::Row;

#[derive(Row)]
struct Borrowed<'a, 'b> {
    name: &'a str,
    tag: &'b str,
}

fn main() {}
