//! The blocks a SELECT decodes into, kept by its connection between queries.

use chnative_proto::connection::BlockSink;
use chnative_proto::packet::BlockKind;
use chnative_proto::Block;

/// The blocks a connection's queries decode into. They stay with the
/// connection between queries, so the next query's blocks reuse their columns
/// (no new names, types or buffers when the shape repeats, as it does for
/// ProfileEvents on every query). The flags say which of them this query has
/// filled; the others read as empty.
#[derive(Default)]
pub(crate) struct Blocks {
    pub(crate) data: Block,
    pub(crate) header: Block,
    pub(crate) totals: Block,
    pub(crate) extremes: Block,
    pub(crate) profile_events: Block,
    pub(crate) logs: Block,
    /// Always empty: what an accessor lends when this query has no such block.
    pub(crate) empty: Block,
    pub(crate) has_header: bool,
    pub(crate) has_totals: bool,
    pub(crate) has_extremes: bool,
    pub(crate) has_profile_events: bool,
    pub(crate) has_logs: bool,
}

impl Blocks {
    /// Forgets what the previous query received (keeping the memory).
    pub(crate) fn start(&mut self) {
        self.has_header = false;
        self.has_totals = false;
        self.has_extremes = false;
        self.has_profile_events = false;
        self.has_logs = false;
    }

    /// Keeps the header just decoded into `data` as a buffer-less copy (the
    /// data blocks that follow reuse `data`'s columns and buffers). The copy
    /// from the previous query is kept when the names and types are the same.
    pub(crate) fn keep_header(&mut self) {
        let same = self.header.columns().len() == self.data.columns().len()
            && self
                .header
                .columns()
                .iter()
                .zip(self.data.columns())
                .all(|(h, d)| h.name() == d.name() && h.type_name() == d.type_name());
        if same {
            self.header.info.clone_from(&self.data.info);
        } else {
            self.header = self.data.empty_like();
        }
        self.has_header = true;
    }
}

/// `block` if this query filled it.
pub(crate) fn present(has: bool, block: &Block) -> Option<&Block> {
    has.then_some(block)
}

impl BlockSink for Blocks {
    fn block(&mut self, kind: BlockKind) -> Option<&mut Block> {
        Some(match kind {
            BlockKind::Data => &mut self.data,
            BlockKind::Totals => &mut self.totals,
            BlockKind::Extremes => &mut self.extremes,
            BlockKind::ProfileEvents => &mut self.profile_events,
            BlockKind::Log => &mut self.logs,
            // A kind this stream has no accessor for is decoded and discarded.
            _ => return None,
        })
    }
}
