//! Column data assembled from Rust values, for building a [`crate::Column`] by
//! hand (for instance to send a [`crate::Block`] in an INSERT).
//!
//! The builders only assemble buffers; [`crate::Column::new`] is the one place
//! that checks the result against the column's type (widths, lengths, offsets,
//! values), so a mistake is reported once, with the column's name.

use super::{ArrayColumn, ColumnData, FixedColumn, IntoData, NullableColumn, StringColumn, TupleColumn};
use crate::buffer::AlignedBuf;
use crate::view::FixedValue;

fn buf(bytes: &[u8]) -> AlignedBuf {
    let mut b = AlignedBuf::new();
    b.set_from(bytes);
    b
}

impl ColumnData {
    /// Fixed-width values, copied: numbers, dates, UUIDs, decimals as raw integers, enums.
    pub fn from_values<T: FixedValue>(values: &[T]) -> ColumnData {
        FixedColumn::new(std::mem::size_of::<T>(), buf(bytemuck::cast_slice(values))).into_data()
    }

    /// `FixedString(n)` values back to back, `rows × n` bytes.
    pub fn from_fixed_strings(bytes: &[u8], n: usize) -> ColumnData {
        FixedColumn::new(n, buf(bytes)).into_data()
    }

    /// Strings (any byte strings), copied into one blob with end offsets.
    pub fn from_strings<S: AsRef<[u8]>>(values: &[S]) -> ColumnData {
        let mut offsets = AlignedBuf::new();
        let mut data = AlignedBuf::new();
        for v in values {
            data.extend_from(v.as_ref());
            offsets.push(data.len() as u64);
        }
        StringColumn::new(offsets, data).into_data()
    }

    /// `Nullable(T)`: one byte per row (1 = NULL) over values with a placeholder at each NULL.
    pub fn nullable(nulls: &[u8], values: ColumnData) -> ColumnData {
        NullableColumn::new(buf(nulls), values).into_data()
    }

    /// `Array(T)`: the u64 end offset of each row into the flattened elements.
    pub fn array(offsets: &[u64], elements: ColumnData) -> ColumnData {
        ArrayColumn::new(buf(bytemuck::cast_slice(offsets)), elements).into_data()
    }

    /// `Map(K, V)`: the u64 end offset of each row into the flattened keys and values.
    pub fn map(offsets: &[u64], keys: ColumnData, values: ColumnData) -> ColumnData {
        ColumnData::array(offsets, ColumnData::tuple(vec![keys, values]))
    }

    /// `Tuple(T1, …)`: one column per element.
    pub fn tuple(elements: Vec<ColumnData>) -> ColumnData {
        TupleColumn::new(elements).into_data()
    }
}

#[cfg(test)]
mod tests {
    use crate::{Block, Column, ColumnData, ProtoError};

    #[test]
    fn built_columns_read_back() {
        let block = Block::from_columns(vec![
            Column::new("id", "UInt64", ColumnData::from_values(&[1u64, 2])).unwrap(),
            Column::new("s", "String", ColumnData::from_strings(&["a", "bc"])).unwrap(),
            Column::new("fs", "FixedString(2)", ColumnData::from_fixed_strings(b"abcd", 2)).unwrap(),
            Column::new("n", "Nullable(Int8)", ColumnData::nullable(&[0, 1], ColumnData::from_values(&[-1i8, 0])))
                .unwrap(),
            Column::new("a", "Array(String)", ColumnData::array(&[0, 2], ColumnData::from_strings(&["x", "y"])))
                .unwrap(),
            Column::new(
                "m",
                "Map(String, UInt8)",
                ColumnData::map(&[1, 1], ColumnData::from_strings(&["k"]), ColumnData::from_values(&[7u8])),
            )
            .unwrap(),
            Column::new(
                "t",
                "Tuple(UInt8, String)",
                ColumnData::tuple(vec![ColumnData::from_values(&[1u8, 2]), ColumnData::from_strings(&["p", "q"])]),
            )
            .unwrap(),
        ])
        .unwrap();
        let mut bytes = Vec::new();
        block.write(&mut bytes, 54492).unwrap();
        let mut again = Block::new();
        again
            .read(
                &mut crate::wire::Reader::new(&bytes),
                54492,
                &crate::BlockLimits::default(),
                &mut crate::BufferPool::new(),
            )
            .unwrap();
        let v = |n: &str| again.column(n).unwrap().view();
        assert_eq!(v("id").values::<u64>().unwrap(), &[1, 2]);
        assert_eq!(v("s").as_strings().unwrap().str(1).unwrap(), "bc");
        assert_eq!(v("fs").as_fixed_strings().unwrap(), (&b"abcd"[..], 2));
        assert!(v("n").as_nullable().unwrap().is_null(1));
        assert_eq!(v("a").as_array().unwrap().offsets(), &[0, 2]);
        assert_eq!(v("m").as_array().unwrap().offsets(), &[1, 1]);
        assert_eq!(v("t").tuple_element(1).unwrap().as_strings().unwrap().str(0).unwrap(), "p");
    }

    #[test]
    fn mistakes_are_reported_by_column_new() {
        let err = |ty: &str, data: ColumnData| match Column::new("c", ty, data) {
            Err(ProtoError::InvalidColumn { column, reason, .. }) if column == "c" => reason,
            other => panic!("{ty}: {other:?}"),
        };
        assert!(err("UInt64", ColumnData::from_values(&[1u32, 2])).contains("4 bytes wide"));
        assert!(err("FixedString(3)", ColumnData::from_fixed_strings(b"abcd", 3)).contains("not a whole number"));
        assert!(err("FixedString(3)", ColumnData::from_fixed_strings(b"abcd", 0)).contains("0 bytes wide"));
        let n = ColumnData::nullable(&[0], ColumnData::from_values(&[1u8, 2]));
        assert!(err("Nullable(UInt8)", n).contains("null map has 1 rows"));
        let a = ColumnData::array(&[3], ColumnData::from_values(&[1u8, 2]));
        assert!(err("Array(UInt8)", a).contains("end at 3"));
        let t = ColumnData::tuple(vec![ColumnData::from_values(&[1u8])]);
        assert!(err("Tuple(UInt8, UInt8)", t).contains("1 tuple elements"));
        let m = ColumnData::map(&[1], ColumnData::from_strings(&["k"]), ColumnData::from_values(&[1u8, 2]));
        assert!(err("Map(String, UInt8)", m).contains("1 keys and 2 values"));
        assert!(err("Enum8('a' = 1)", ColumnData::from_values(&[2i8])).contains("value #0 is 2"));
    }
}
