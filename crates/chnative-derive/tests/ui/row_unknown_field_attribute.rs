use chnative_derive::Row;

#[derive(Row)]
struct Event {
    #[row(column = "event_id")]
    id: u64,
}

fn main() {}
