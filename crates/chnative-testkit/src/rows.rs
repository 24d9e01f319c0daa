//! Result rows as text, to compare an engine's answer with ClickHouse's `FORMAT TSV`.
//!
//! [`tsv_lines`] (feature `arrow`) prints Arrow record batches one line per row, cells
//! joined by tabs, NULL as `\N` and zoned timestamps as ClickHouse prints DateTime;
//! [`same_rows`] compares two such answers cell by cell.

/// Equal row by row and cell by cell; cells that both parse as numbers may differ by
/// 1e-9 relative (engines print floats and averages differently).
pub fn same_rows(ours: &[String], theirs: &[String]) -> bool {
    ours.len() == theirs.len()
        && ours.iter().zip(theirs).all(|(a, b)| {
            let (ca, cb): (Vec<&str>, Vec<&str>) = (a.split('\t').collect(), b.split('\t').collect());
            ca.len() == cb.len()
                && ca.iter().zip(&cb).all(|(x, y)| {
                    x == y
                        || match (x.parse::<f64>(), y.parse::<f64>()) {
                            (Ok(p), Ok(q)) => (p - q).abs() <= 1e-9 * p.abs().max(q.abs()).max(1.0),
                            _ => false,
                        }
                })
        })
}

/// The rows of `batches` as TSV lines, as ClickHouse would print them.
#[cfg(feature = "arrow")]
pub fn tsv_lines(batches: &[arrow_array::RecordBatch]) -> Vec<String> {
    use arrow_cast::display::{ArrayFormatter, FormatOptions};
    let opts = FormatOptions::default().with_null("\\N").with_timestamp_tz_format(Some("%Y-%m-%d %H:%M:%S"));
    let mut out = Vec::new();
    for b in batches {
        let fmts: Vec<_> = b.columns().iter().map(|c| ArrayFormatter::try_new(c.as_ref(), &opts).unwrap()).collect();
        for r in 0..b.num_rows() {
            out.push(fmts.iter().map(|f| f.value(r).to_string()).collect::<Vec<_>>().join("\t"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_match_exactly_or_as_close_numbers() {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(same_rows(&v(&["1\ta\t0.1"]), &v(&["1\ta\t0.10000000000000001"])));
        assert!(!same_rows(&v(&["1\ta"]), &v(&["1\tb"])));
        assert!(!same_rows(&v(&["1\t2"]), &v(&["1"])), "a missing cell is a difference");
        assert!(!same_rows(&v(&["1"]), &v(&["1", "2"])));
        assert!(!same_rows(&v(&["1.0"]), &v(&["1.1"])));
    }
}
