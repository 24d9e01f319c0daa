//! AggregateFunction columns: each row's state as the server serialized it, and the
//! value inside it for the states this crate knows ([`AggregateState`]).

use super::ColumnView;
use crate::column::{AggregateState, ColumnData, StateValue};
use crate::error::{ProtoError, Result};

impl<'a> ColumnView<'a> {
    /// An `AggregateFunction(f, T)` column of a function whose states this crate decodes.
    pub fn as_aggregate_states(&self) -> Result<AggregateStatesView<'a>> {
        match (AggregateState::for_type(&self.ty), self.data) {
            (Some(state), ColumnData::Delimited(c)) => Ok(AggregateStatesView {
                name: self.name,
                state,
                offsets: c.offsets().typed::<u64>()?,
                data: c.data().as_bytes(),
            }),
            _ => Err(self.mismatch("AggregateFunction")),
        }
    }
}

/// The states of an `AggregateFunction` column, one per row.
#[derive(Debug, Clone, Copy)]
pub struct AggregateStatesView<'a> {
    name: &'a str,
    state: AggregateState,
    offsets: &'a [u64],
    data: &'a [u8],
}

impl<'a> AggregateStatesView<'a> {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.offsets.len()
    }
    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }
    /// The state's layout.
    pub fn layout(&self) -> AggregateState {
        self.state
    }
    /// Row `i`'s state, as the server serialized it (what `hex(state)` prints). Panics if `i >= len()`.
    pub fn state(&self, i: usize) -> &'a [u8] {
        let start = if i == 0 { 0 } else { self.offsets[i - 1] as usize };
        &self.data[start..self.offsets[i] as usize]
    }
    /// The value inside row `i`'s state (what `finalizeAggregation` gives), `None` for a
    /// `min`/`max`/`any` that saw no value. Panics if `i >= len()`.
    pub fn value(&self, i: usize) -> Result<Option<StateValue<'a>>> {
        self.state
            .value(self.state(i))
            .map_err(|e| ProtoError::violation(format!("column `{}` row {i}: {e}", self.name)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::DataType;
    use crate::view::test_util::column;

    #[test]
    fn states_and_their_values() {
        // minState over UInt16 for three groups: 7, none, 0x0102.
        let name = "AggregateFunction(min, UInt16)";
        let ty = DataType::parse(name).unwrap();
        let data = column(&ty, 3, &[1, 7, 0, 0, 1, 2, 1]);
        let v = ColumnView::new("m", &ty, name, &data);
        let s = v.as_aggregate_states().unwrap();
        assert_eq!((s.len(), s.layout()), (3, AggregateState::Single { width: 2 }));
        assert_eq!([s.state(0), s.state(1), s.state(2)], [&[1u8, 7, 0][..], &[0], &[1, 2, 1]]);
        assert_eq!(s.value(0).unwrap(), Some(StateValue::Bytes(&[7, 0])));
        assert_eq!(s.value(1).unwrap(), None);
        assert!(v.as_strings().is_err() && v.values::<u16>().is_err());
        // A function without a codec has no column at all.
        let ty = DataType::parse("AggregateFunction(uniq, UInt64)").unwrap();
        assert!(ColumnData::for_type(&ty, &mut crate::buffer::BufferPool::new()).is_err());
    }
}
