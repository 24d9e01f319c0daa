use chnative_derive::Row;

#[derive(Row)]
struct Event {
    #[row(rename = event_id)]
    id: u64,
}

fn main() {}
