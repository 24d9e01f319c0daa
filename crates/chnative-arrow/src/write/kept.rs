//! What an Arrow INSERT keeps: conversion vectors from batch to batch, and,
//! with its client, a table's columns and vectors for the next INSERT into it
//! (checked against each INSERT's header, which is the truth).

use chnative::InsertData;

use super::{Prep, TableColumn};

/// Byte vectors that converted values and null maps are written into, kept
/// from batch to batch: an INSERT of many similar batches converts into the
/// memory of its first one instead of allocating for every batch.
#[derive(Debug, Default)]
pub(crate) struct Pool {
    free: Vec<Vec<u8>>,
}

impl Pool {
    /// An empty vector with room for `bytes`: the smallest kept one that is
    /// large enough, else the largest (grown), else a new one.
    pub(super) fn take(&mut self, bytes: usize) -> Vec<u8> {
        let fits =
            (0..self.free.len()).filter(|&i| self.free[i].capacity() >= bytes).min_by_key(|&i| self.free[i].capacity());
        let pick = fits.or_else(|| (0..self.free.len()).max_by_key(|&i| self.free[i].capacity()));
        let mut v = pick.map(|i| self.free.swap_remove(i)).unwrap_or_default();
        v.clear();
        v.reserve(bytes);
        v
    }

    /// Keeps the vectors of `p` for the next batch.
    pub(crate) fn give(&mut self, p: Prep) {
        match p {
            Prep::Owned { bytes, .. } => self.free.push(bytes),
            Prep::Nullable { nulls, inner } => {
                self.free.push(nulls);
                self.give(*inner);
            }
            Prep::Array { inner, .. } => self.give(*inner),
            Prep::Map { keys, values, .. } => {
                self.give(*keys);
                self.give(*values);
            }
            Prep::Tuple(elements) => elements.into_iter().for_each(|e| self.give(e)),
            Prep::Variant { variants, .. } => variants.into_iter().for_each(|(_, v)| self.give(v)),
            Prep::Fixed { .. }
            | Prep::FixedStrings { .. }
            | Prep::Blob { .. }
            | Prep::Starts { .. }
            | Prep::Column(_) => {}
        }
    }
}

/// What an [`ArrowInsert`](crate::ArrowInsert) into a table keeps from
/// batch to batch, and its client keeps for the next INSERT into the table:
/// the insertable columns, the conversion vectors, and the per-batch lists
/// (prepared columns, (name, data) pairs handed to the INSERT).
#[derive(Debug, Default)]
pub(crate) struct Kept {
    /// The table as the caller named it (empty: nothing to keep).
    pub table: String,
    pub columns: Vec<TableColumn>,
    pub pool: Pool,
    pub prepared: Vec<(usize, Prep)>,
    pub data: Vec<(&'static str, InsertData<'static>)>,
    /// The first batch's column names, for the INSERT statement.
    pub names: Vec<&'static str>,
}

impl Kept {
    pub(crate) fn new(table: &str, columns: Vec<TableColumn>) -> Kept {
        Kept { table: table.to_string(), columns, ..Kept::default() }
    }
}

/// The [`Kept`] of the tables a client inserted into last (a
/// [`Client::extension`](chnative::Client::extension)).
#[derive(Debug, Default)]
pub(crate) struct KeptTables {
    tables: std::sync::Mutex<Vec<Kept>>,
}

/// How many tables a client keeps [`Kept`] for.
const KEPT_TABLES: usize = 8;

impl KeptTables {
    /// What was kept for `table` (taken: two INSERTs at once into a table
    /// each have their own).
    pub(crate) fn take(&self, table: &str) -> Option<Kept> {
        let mut all = self.tables.lock().unwrap_or_else(|e| e.into_inner());
        let at = all.iter().position(|k| k.table == table)?;
        Some(all.remove(at))
    }

    /// Keeps `kept` in place of what was kept for its table; the table used
    /// least recently goes when there are too many.
    pub(crate) fn keep(&self, kept: Kept) {
        let mut all = self.tables.lock().unwrap_or_else(|e| e.into_inner());
        all.retain(|k| k.table != kept.table);
        if all.len() == KEPT_TABLES {
            all.remove(0);
        }
        all.push(kept);
    }
}

/// Whether every column of an INSERT's header has the name and type of one
/// of `columns`.
pub(crate) fn header_agrees(header: &chnative::Block, columns: &[TableColumn]) -> bool {
    header.columns().iter().enumerate().all(|(i, h)| {
        let c = match columns.get(i) {
            Some(c) if c.name == h.name() => Some(c),
            _ => columns.iter().find(|c| c.name == h.name()),
        };
        c.is_some_and(|c| c.type_name == h.type_name())
    })
}

/// Takes the names and types of an INSERT's header into `columns`.
pub(crate) fn learn_header(header: &chnative::Block, columns: &mut Vec<TableColumn>) {
    for h in header.columns() {
        let col =
            TableColumn { name: h.name().to_string(), ty: h.data_type().clone(), type_name: h.type_name().to_string() };
        match columns.iter_mut().find(|c| c.name == h.name()) {
            Some(c) => *c = col,
            None => columns.push(col),
        }
    }
}
