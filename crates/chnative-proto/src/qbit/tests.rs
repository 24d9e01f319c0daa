use super::*;
use crate::buffer::BufferPool;
use crate::column::{FixedColumn, TupleColumn};
use crate::test_rng::Rng;

/// The obvious bit-at-a-time transposition (the reference).
fn naive_encode(src: &[u8], b: usize, dim: usize) -> Vec<Vec<u8>> {
    let w = 8 * b;
    let nb = plane_bytes(dim);
    let rows = src.len() / (b * dim);
    let mut planes = vec![vec![0u8; rows * nb]; w];
    for r in 0..rows {
        for i in 0..dim {
            let mut v = [0u8; 8];
            v[..b].copy_from_slice(&src[(r * dim + i) * b..(r * dim + i + 1) * b]);
            let x = u64::from_le_bytes(v);
            for (p, plane) in planes.iter_mut().enumerate() {
                if (x >> (w - 1 - p)) & 1 == 1 {
                    plane[r * nb + nb - 1 - i / 8] |= 1 << (i % 8);
                }
            }
        }
    }
    planes
}

fn naive_decode(planes: &[Vec<u8>], b: usize, dim: usize, rows: usize) -> Vec<u8> {
    let w = 8 * b;
    let nb = plane_bytes(dim);
    let mut out = vec![0u8; rows * dim * b];
    for r in 0..rows {
        for i in 0..dim {
            let mut x = 0u64;
            for (p, plane) in planes.iter().enumerate() {
                if (plane[r * nb + nb - 1 - i / 8] >> (i % 8)) & 1 == 1 {
                    x |= 1 << (w - 1 - p);
                }
            }
            out[(r * dim + i) * b..(r * dim + i + 1) * b].copy_from_slice(&x.to_le_bytes()[..b]);
        }
    }
    out
}

fn planes_of(data: &ColumnData) -> Vec<Vec<u8>> {
    match data {
        ColumnData::Tuple(TupleColumn { elems: cols }) => cols
            .iter()
            .map(|c| match c {
                ColumnData::Fixed(FixedColumn { data, .. }) => data.as_bytes().to_vec(),
                _ => unreachable!(),
            })
            .collect(),
        _ => unreachable!(),
    }
}

fn data_from_planes(planes: &[Vec<u8>], nb: usize) -> ColumnData {
    ColumnData::tuple(
        planes
            .iter()
            .map(|p| {
                let mut d = AlignedBuf::new();
                d.set_from(p);
                ColumnData::Fixed(FixedColumn { width: nb, data: d })
            })
            .collect(),
    )
}

fn hex(planes: &[Vec<u8>]) -> String {
    planes.iter().flatten().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn transpose8_matches_definition() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for _ in 0..1000 {
        let x = rng.next();
        let t = transpose8(x);
        for r in 0..8 {
            for c in 0..8 {
                assert_eq!((x >> (8 * r + c)) & 1, (t >> (8 * c + r)) & 1);
            }
        }
    }
}

/// Plane bytes from ClickHouse 26.9's Native output (HTTP `FORMAT Native`).
#[test]
fn matches_server_bytes() {
    // CAST([1.0, -2.0, 0.5] AS QBit(Float32, 3))
    let c = column("v", 3, &[1.0f32, -2.0, 0.5]).unwrap();
    assert_eq!(hex(&planes_of(c.data())), "0202050505050505010000000000000000000000000000000000000000000000");
    // CAST(arrayMap(i -> toFloat32(if(i%2=0, -1, 1)*i), range(16)) AS QBit(Float32, 16))
    let v: Vec<f32> = (0..16).map(|i| if i % 2 == 0 { -(i as f32) } else { i as f32 }).collect();
    let v: Vec<f32> = v.iter().map(|&x| if x == 0.0 { 0.0 } else { x }).collect();
    let want = format!("{}{}", "5554fffc00020002000200020002ff0200f2f0c8cca0aa00", "0".repeat(80));
    for k in Kernel::available() {
        assert_eq!(hex(&planes_of(&transpose_with(k, &v, 16).unwrap())), want, "{k:?}");
    }
    // arrayMap(i -> i*1.5 - 4, range(10)) as QBit(BFloat16, 10) and QBit(Float64, 10)
    let bf: Vec<u16> = (0..10).map(|i| ((i as f32 * 1.5 - 4.0).to_bits() >> 16) as u16).collect();
    assert_eq!(
        hex(&planes_of(&transpose(&bf, 10).unwrap())),
        "000703f3000c000c000c000c000c030c00c500a0006202800200000000000000"
    );
    let f: Vec<f64> = (0..10).map(|i| i as f64 * 1.5 - 4.0).collect();
    let got = hex(&planes_of(&transpose(&f, 10).unwrap()));
    assert!(got.starts_with("000703f3000c000c000c000c000c000c000c000c030c00c500a0006202800200"), "{got}");
    assert!(got[64..].bytes().all(|b| b == b'0'));
    // Element 0 of a 24-element vector lives in the last byte of each plane.
    let mut one = vec![0f32; 24];
    one[0] = -1.0;
    assert_eq!(planes_of(&transpose(&one, 24).unwrap())[0], [0, 0, 1]);
    one[0] = 0.0;
    one[9] = -1.0;
    assert_eq!(planes_of(&transpose(&one, 24).unwrap())[0], [0, 2, 0]);
}

fn check_width<T: QBitValue>(rng: &mut Rng) {
    let b = T::ELEMENT.bytes();
    let dims: Vec<usize> = (1..=72).chain([95, 96, 97, 127, 128, 129, 255, 256, 257, 1000]).collect();
    for &dim in &dims {
        for rows in [0usize, 1, 2, 5] {
            let bytes = rng.bytes(rows * dim * b);
            let mut src = vec![T::zeroed(); rows * dim];
            bytemuck::cast_slice_mut::<T, u8>(&mut src).copy_from_slice(&bytes);
            let want = naive_encode(&bytes, b, dim);
            for k in Kernel::available() {
                let data = transpose_with(k, &src, dim).unwrap();
                assert_eq!(planes_of(&data), want, "{:?} dim {dim} rows {rows} {k:?}", T::ELEMENT);
                let view = QBitView::from_data(T::ELEMENT, dim, &data).unwrap();
                assert_eq!(view.len(), rows);
                let mut back = vec![T::zeroed(); rows * dim];
                view.read_rows_with(k, 0..rows, &mut back).unwrap();
                assert!(bytemuck::cast_slice::<T, u8>(&back) == bytes, "{dim} {rows} {k:?}");
            }
            // Random planes, padding bits included: every kernel agrees with the reference.
            let nb = plane_bytes(dim);
            let planes: Vec<Vec<u8>> = (0..8 * b).map(|_| rng.bytes(rows * nb)).collect();
            let want = naive_decode(&planes, b, dim, rows);
            let data = data_from_planes(&planes, nb);
            let view = QBitView::from_data(T::ELEMENT, dim, &data).unwrap();
            for k in Kernel::available() {
                let mut out = vec![T::zeroed(); rows * dim];
                view.read_rows_with(k, 0..rows, &mut out).unwrap();
                assert!(bytemuck::cast_slice::<T, u8>(&out) == want, "decode {dim} {rows} {k:?}");
                if rows > 1 {
                    let mut one = vec![T::zeroed(); dim];
                    view.read_rows_with(k, 1..2, &mut one).unwrap();
                    assert!(bytemuck::cast_slice::<T, u8>(&one) == &want[dim * b..2 * dim * b]);
                }
            }
        }
    }
}

#[test]
fn random_float32() {
    check_width::<f32>(&mut Rng(1));
}

#[test]
fn random_float64() {
    check_width::<f64>(&mut Rng(2));
}

#[test]
fn random_bfloat16() {
    check_width::<u16>(&mut Rng(3));
}

#[test]
fn scalar_kernel_runs_explicitly() {
    assert!(Kernel::Scalar.is_available());
    assert!(Kernel::available().contains(&Kernel::Scalar));
    let v: Vec<f32> = (0..3 * 40).map(|i| i as f32 * 0.25 - 7.0).collect();
    let data = transpose_with(Kernel::Scalar, &v, 40).unwrap();
    let view = QBitView::from_data(Element::Float32, 40, &data).unwrap();
    let mut out = vec![0f32; v.len()];
    view.read_rows_with(Kernel::Scalar, 0..3, &mut out).unwrap();
    assert_eq!(out, v);
    assert_eq!(planes_of(&data), planes_of(&transpose_with(Kernel::detect(), &v, 40).unwrap()));
}

#[test]
fn column_round_trip_and_widening() {
    let v: Vec<f32> = vec![1.5, -0.0, f32::INFINITY, f32::MIN_POSITIVE / 4.0, -3.25, 1e30, f32::NAN, 0.1, 2.0];
    let col = column("v", 9, &v).unwrap();
    assert_eq!(col.type_name(), "QBit(Float32, 9)");
    assert_eq!(col.rows(), 1);
    let view = QBitView::new(&col.view()).unwrap();
    let back: Vec<f32> = view.to_vec().unwrap();
    assert_eq!(bytemuck::cast_slice::<f32, u32>(&back), bytemuck::cast_slice::<f32, u32>(&v));
    // Each plane as the tuple element views.
    assert_eq!(col.view().tuple_element(0).unwrap().as_fixed_strings().unwrap().1, 2);

    let bf: Vec<u16> = v.iter().map(|x| (x.to_bits() >> 16) as u16).collect();
    let col = column("b", 3, &bf).unwrap();
    assert_eq!(col.type_name(), "QBit(BFloat16, 3)");
    let view = QBitView::new(&col.view()).unwrap();
    let mut wide = vec![0f32; 9];
    view.read_f32(&mut wide).unwrap();
    for (w, b) in wide.iter().zip(&bf) {
        assert_eq!(w.to_bits(), u32::from(*b) << 16);
    }
}

#[test]
fn storage_is_reused() {
    let mut pool = BufferPool::new();
    let ty = DataType::parse("QBit(Float64, 5)").unwrap();
    let mut data = ColumnData::for_type(&ty, &mut pool).unwrap();
    transpose_into(Kernel::detect(), &[1.0f64; 10], 5, &mut data).unwrap();
    assert_eq!(data.rows(), 2);
    transpose_into(Kernel::detect(), &[2.0f64; 5], 5, &mut data).unwrap();
    assert_eq!(data.rows(), 1);
    let view = QBitView::from_data(Element::Float64, 5, &data).unwrap();
    assert_eq!(view.to_vec::<f64>().unwrap(), [2.0; 5]);
}

#[test]
fn errors() {
    assert!(transpose(&[1.0f32; 5], 2).is_err());
    assert!(transpose(&[1.0f32; 4], 0).is_err());
    assert!(transpose::<f32>(&[], 3).unwrap().rows() == 0);
    let col = column("v", 2, &[1.0f32, 2.0, 3.0, 4.0]).unwrap();
    let view = QBitView::new(&col.view()).unwrap();
    let mut f64s = [0f64; 4];
    assert!(matches!(view.read(&mut f64s), Err(ProtoError::Type { .. })));
    let mut short = [0f32; 3];
    assert!(view.read(&mut short).is_err());
    let mut one = [0f32; 2];
    assert!(view.row(2, &mut one).is_err());
    view.row(1, &mut one).unwrap();
    assert_eq!(one, [3.0, 4.0]);
    // A non-QBit column.
    let mut pool = BufferPool::new();
    let data = ColumnData::for_type(&DataType::Float32, &mut pool).unwrap();
    let c = Column::new("x", "Float32", data).unwrap();
    assert!(QBitView::new(&c.view()).is_err());
    // Storage of the wrong shape.
    let mut wrong = transpose(&[1.0f32; 4], 2).unwrap();
    assert!(transpose_into(Kernel::Scalar, &[1.0f64; 4], 2, &mut wrong).is_err());
    assert!(transpose_into(Kernel::Scalar, &[1.0f32; 9], 9, &mut wrong).is_err());
}
