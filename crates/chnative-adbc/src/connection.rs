//! The ADBC connection: a pool of native connections, and the catalog calls.

use std::collections::HashSet;
use std::sync::Arc;

use adbc_core::error::{Error, Result, Status};
use adbc_core::options::{InfoCode, ObjectDepth, OptionConnection, OptionValue};
use adbc_core::schemas;
use adbc_core::Optionable;
use arrow_array::{
    new_empty_array, ArrayRef, BooleanArray, Int16Array, Int32Array, Int64Array, ListArray, RecordBatch,
    RecordBatchIterator, RecordBatchReader, StringArray, StructArray, UInt32Array, UnionArray,
};
use arrow_buffer::{NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{ArrowError, DataType, Fields, Schema};
use chnative::{Client, Query};

use crate::statement::ChStatement;
use crate::{client_error, invalid, not_implemented, runtime, CancelSlot};

/// An ADBC connection to ClickHouse: a `chnative::Client` (a pool of native
/// connections) and the catalog calls.
pub struct ChConnection {
    config: chnative::Config,
    client: Client,
    cancel: CancelSlot,
}

impl ChConnection {
    pub(crate) fn connect(config: chnative::Config) -> Result<ChConnection> {
        let client = runtime().block_on(Client::connect_with(config.clone())).map_err(client_error)?;
        Ok(ChConnection { config, client, cancel: CancelSlot::default() })
    }

    /// The client underneath.
    pub fn client(&self) -> &Client {
        &self.client
    }

    fn strings(&self, q: Query) -> Result<Vec<Vec<String>>> {
        let rows = runtime().block_on(self.client.fetch_all_values(q)).map_err(client_error)?;
        Ok(rows.iter().map(|r| (0..r.len()).map(|i| r[i].to_string()).collect()).collect())
    }
}

type Reader = Box<dyn RecordBatchReader + Send + 'static>;

fn one_batch(batch: RecordBatch) -> Reader {
    let schema = batch.schema();
    Box::new(RecordBatchIterator::new(vec![Ok::<_, ArrowError>(batch)], schema))
}

fn fields_of(dt: &DataType) -> Fields {
    match dt {
        DataType::Struct(f) => f.clone(),
        _ => unreachable!("ADBC's schemas are structs here"),
    }
}

/// A list column of type `list_dt` (a List) from offsets, values and validity.
fn list(list_dt: &DataType, offsets: Vec<i32>, values: ArrayRef, valid: Option<Vec<bool>>) -> Result<ArrayRef> {
    let DataType::List(item) = list_dt else { unreachable!("ADBC's schemas have lists here") };
    let arr = ListArray::try_new(
        item.clone(),
        OffsetBuffer::new(ScalarBuffer::from(offsets)),
        values,
        valid.map(NullBuffer::from),
    )
    .map_err(|e| Error::with_message_and_status(e.to_string(), Status::Internal))?;
    Ok(Arc::new(arr))
}

fn structs(dt: &DataType, children: Vec<ArrayRef>) -> Result<ArrayRef> {
    let s = StructArray::try_new(fields_of(dt), children, None)
        .map_err(|e| Error::with_message_and_status(e.to_string(), Status::Internal))?;
    Ok(Arc::new(s))
}

fn field_type(dt: &DataType, name: &str) -> DataType {
    fields_of(dt).iter().find(|f| f.name() == name).map(|f| f.data_type().clone()).expect("ADBC schema field")
}

/// The ADBC table type of a ClickHouse engine.
fn table_type(engine: &str) -> &'static str {
    match engine {
        "View" => "VIEW",
        "MaterializedView" => "MATERIALIZED VIEW",
        "Dictionary" => "DICTIONARY",
        _ => "TABLE",
    }
}

const TABLE_TYPES: [&str; 4] = ["TABLE", "VIEW", "MATERIALIZED VIEW", "DICTIONARY"];

/// A LIKE pattern for an optional ADBC filter.
fn pattern(p: Option<&str>) -> String {
    p.unwrap_or("%").to_string()
}

/// Whether `s` matches SQL LIKE pattern `p` (`%`, `_`, `\` escapes).
fn like(s: &str, p: &str) -> bool {
    fn go(s: &[char], p: &[char]) -> bool {
        match p.first() {
            None => s.is_empty(),
            Some('%') => (0..=s.len()).any(|i| go(&s[i..], &p[1..])),
            Some('_') => !s.is_empty() && go(&s[1..], &p[1..]),
            Some('\\') if p.len() > 1 => s.first() == Some(&p[1]) && go(&s[1..], &p[2..]),
            Some(c) => s.first() == Some(c) && go(&s[1..], &p[1..]),
        }
    }
    go(&s.chars().collect::<Vec<_>>(), &p.chars().collect::<Vec<_>>())
}

impl Optionable for ChConnection {
    type Option = OptionConnection;

    fn set_option(&mut self, key: OptionConnection, value: OptionValue) -> Result<()> {
        let text = match &value {
            OptionValue::String(s) => s.clone(),
            _ => return Err(invalid(format!("option {} takes a string", key.as_ref()))),
        };
        match key {
            OptionConnection::AutoCommit => match text.as_str() {
                "true" => Ok(()),
                _ => Err(not_implemented("turning autocommit off (ClickHouse has no transactions)")),
            },
            OptionConnection::CurrentCatalog => {
                let config = self.config.clone().database(text);
                *self = ChConnection::connect(config)?;
                Ok(())
            }
            OptionConnection::CurrentSchema if text.is_empty() => Ok(()),
            OptionConnection::ReadOnly if text == "false" => Ok(()),
            k => Err(not_implemented(&format!("connection option {}", k.as_ref()))),
        }
    }

    fn get_option_string(&self, key: OptionConnection) -> Result<String> {
        match key {
            OptionConnection::AutoCommit => Ok("true".into()),
            OptionConnection::CurrentCatalog => {
                let rows = self.strings(Query::new("SELECT currentDatabase()"))?;
                Ok(rows.first().and_then(|r| r.first()).cloned().unwrap_or_default())
            }
            OptionConnection::CurrentSchema => Ok(String::new()),
            k => Err(Error::with_message_and_status(format!("{} not readable", k.as_ref()), Status::NotFound)),
        }
    }

    fn get_option_bytes(&self, key: OptionConnection) -> Result<Vec<u8>> {
        Err(Error::with_message_and_status(format!("{} is not a bytes option", key.as_ref()), Status::NotFound))
    }

    fn get_option_int(&self, key: OptionConnection) -> Result<i64> {
        Err(Error::with_message_and_status(format!("{} is not an int option", key.as_ref()), Status::NotFound))
    }

    fn get_option_double(&self, key: OptionConnection) -> Result<f64> {
        Err(Error::with_message_and_status(format!("{} is not a double option", key.as_ref()), Status::NotFound))
    }
}

impl adbc_core::Connection for ChConnection {
    type StatementType = ChStatement;

    fn new_statement(&mut self) -> Result<ChStatement> {
        Ok(ChStatement::new(self.client.clone(), self.cancel.clone()))
    }

    fn get_cancel_handle(&self) -> Box<dyn adbc_core::CancelHandle> {
        Box::new(self.cancel.clone())
    }

    fn get_info(&self, codes: Option<HashSet<InfoCode>>) -> Result<Reader> {
        let info = self.client.server_info();
        let (a, b, c) = info.version;
        let mut entries: Vec<(InfoCode, InfoValue)> = vec![
            (InfoCode::VendorName, InfoValue::Str("ClickHouse".into())),
            (InfoCode::VendorVersion, InfoValue::Str(format!("{a}.{b}.{c}"))),
            (InfoCode::VendorSql, InfoValue::Bool(true)),
            (InfoCode::VendorSubstrait, InfoValue::Bool(false)),
            (InfoCode::DriverName, InfoValue::Str("chnative ADBC driver for ClickHouse".into())),
            (InfoCode::DriverVersion, InfoValue::Str(env!("CARGO_PKG_VERSION").into())),
            (InfoCode::DriverArrowVersion, InfoValue::Str("arrow-rs 60".into())),
            (InfoCode::DriverAdbcVersion, InfoValue::Int(adbc_core::constants::ADBC_VERSION_1_1_0 as i64)),
        ];
        if let Some(codes) = codes {
            entries.retain(|(c, _)| codes.contains(c));
        }
        info_batch(entries).map(one_batch)
    }

    fn get_objects(
        &self,
        depth: ObjectDepth,
        catalog: Option<&str>,
        db_schema: Option<&str>,
        table_name: Option<&str>,
        table_types: Option<Vec<&str>>,
        column_name: Option<&str>,
    ) -> Result<Reader> {
        let catalogs: Vec<String> = self
            .strings(
                Query::new("SELECT name FROM system.databases WHERE name LIKE {c:String} ORDER BY name")
                    .bind("c", pattern(catalog)),
            )?
            .into_iter()
            .map(|mut r| r.remove(0))
            .collect();
        let want_schemas = !matches!(depth, ObjectDepth::Catalogs);
        let want_tables = matches!(depth, ObjectDepth::Tables | ObjectDepth::Columns | ObjectDepth::All);
        let want_columns = matches!(depth, ObjectDepth::Columns | ObjectDepth::All);
        // The one schema of every database is "".
        let schema_matches = db_schema.is_none_or(|p| like("", p));
        let tables: Vec<(String, String, String)> = if want_tables && schema_matches {
            self.strings(
                Query::new(
                    "SELECT database, name, engine FROM system.tables \
                     WHERE database LIKE {c:String} AND name LIKE {t:String} AND NOT is_temporary ORDER BY database, name",
                )
                .bind("c", pattern(catalog))
                .bind("t", pattern(table_name)),
            )?
            .into_iter()
            .map(|r| (r[0].clone(), r[1].clone(), table_type(&r[2]).to_string()))
            .filter(|(_, _, ty)| table_type_filter(&table_types, ty))
            .collect()
        } else {
            Vec::new()
        };
        // (database, table) → columns: name, position, type, comment, default kind, default expression.
        let columns: Vec<Vec<String>> = if want_columns && !tables.is_empty() {
            self.strings(
                Query::new(
                    "SELECT database, table, name, toString(position), type, comment, default_kind, default_expression \
                     FROM system.columns WHERE database LIKE {c:String} AND table LIKE {t:String} AND name LIKE {n:String} \
                     ORDER BY database, table, position",
                )
                .bind("c", pattern(catalog))
                .bind("t", pattern(table_name))
                .bind("n", pattern(column_name)),
            )?
        } else {
            Vec::new()
        };
        objects_batch(
            &catalogs,
            want_schemas && schema_matches,
            want_schemas,
            want_tables,
            want_columns,
            &tables,
            &columns,
        )
        .map(one_batch)
    }

    fn get_table_schema(&self, catalog: Option<&str>, db_schema: Option<&str>, table_name: &str) -> Result<Schema> {
        if db_schema.is_some_and(|s| !s.is_empty()) {
            return Err(Error::with_message_and_status(
                format!("no schema {:?}: a ClickHouse database has only the schema \"\"", db_schema.unwrap_or("")),
                Status::NotFound,
            ));
        }
        let q = |s: &str| format!("`{}`", s.replace('\\', "\\\\").replace('`', "\\`"));
        let name = match catalog {
            Some(c) => format!("{}.{}", q(c), q(table_name)),
            None => q(table_name),
        };
        runtime().block_on(chnative_arrow::table_schema(&self.client, &name)).map_err(crate::arrow_error)
    }

    fn get_table_types(&self) -> Result<Reader> {
        let arr: ArrayRef = Arc::new(StringArray::from(TABLE_TYPES.to_vec()));
        let batch = RecordBatch::try_new(schemas::GET_TABLE_TYPES_SCHEMA.clone(), vec![arr])
            .map_err(|e| Error::with_message_and_status(e.to_string(), Status::Internal))?;
        Ok(one_batch(batch))
    }

    fn get_statistic_names(&self) -> Result<Reader> {
        Err(not_implemented("get_statistic_names"))
    }

    fn get_statistics(&self, _: Option<&str>, _: Option<&str>, _: Option<&str>, _: bool) -> Result<Reader> {
        Err(not_implemented("get_statistics"))
    }

    fn commit(&mut self) -> Result<()> {
        Err(not_implemented("commit (ClickHouse has no transactions: every statement is autocommitted)"))
    }

    fn rollback(&mut self) -> Result<()> {
        Err(not_implemented("rollback (ClickHouse has no transactions: every statement is autocommitted)"))
    }

    fn read_partition(&self, partition: impl AsRef<[u8]>) -> Result<Reader> {
        let (sql, params) = crate::params::decode_partition(partition.as_ref())?;
        crate::statement::run_query(&self.client, &self.cancel, sql, params)
    }
}

fn table_type_filter(filter: &Option<Vec<&str>>, ty: &str) -> bool {
    filter.as_ref().is_none_or(|f| f.iter().any(|t| t.eq_ignore_ascii_case(ty)))
}

enum InfoValue {
    Str(String),
    Bool(bool),
    Int(i64),
}

fn info_code(c: &InfoCode) -> u32 {
    use adbc_core::constants::*;
    match c {
        InfoCode::VendorName => ADBC_INFO_VENDOR_NAME,
        InfoCode::VendorVersion => ADBC_INFO_VENDOR_VERSION,
        InfoCode::VendorArrowVersion => ADBC_INFO_VENDOR_ARROW_VERSION,
        InfoCode::VendorSql => ADBC_INFO_VENDOR_SQL,
        InfoCode::VendorSubstrait => ADBC_INFO_VENDOR_SUBSTRAIT,
        InfoCode::VendorSubstraitMinVersion => ADBC_INFO_VENDOR_SUBSTRAIT_MIN_VERSION,
        InfoCode::VendorSubstraitMaxVersion => ADBC_INFO_VENDOR_SUBSTRAIT_MAX_VERSION,
        InfoCode::DriverName => ADBC_INFO_DRIVER_NAME,
        InfoCode::DriverVersion => ADBC_INFO_DRIVER_VERSION,
        InfoCode::DriverArrowVersion => ADBC_INFO_DRIVER_ARROW_VERSION,
        InfoCode::DriverAdbcVersion => ADBC_INFO_DRIVER_ADBC_VERSION,
        InfoCode::Other(n) => *n,
        _ => u32::MAX,
    }
}

fn info_batch(entries: Vec<(InfoCode, InfoValue)>) -> Result<RecordBatch> {
    let schema = schemas::GET_INFO_SCHEMA.clone();
    let DataType::Union(fields, _) = schema.field(1).data_type().clone() else { unreachable!("a union") };
    let mut names = Vec::new();
    let mut type_ids = Vec::new();
    let mut offsets = Vec::new();
    let (mut strs, mut bools, mut ints) = (Vec::new(), Vec::new(), Vec::new());
    for (code, value) in entries {
        names.push(info_code(&code));
        match value {
            InfoValue::Str(s) => {
                type_ids.push(0i8);
                offsets.push(strs.len() as i32);
                strs.push(s);
            }
            InfoValue::Bool(b) => {
                type_ids.push(1);
                offsets.push(bools.len() as i32);
                bools.push(b);
            }
            InfoValue::Int(i) => {
                type_ids.push(2);
                offsets.push(ints.len() as i32);
                ints.push(i);
            }
        }
    }
    let mut children: Vec<ArrayRef> = Vec::new();
    for (id, f) in fields.iter() {
        children.push(match id {
            0 => Arc::new(StringArray::from(std::mem::take(&mut strs))),
            1 => Arc::new(BooleanArray::from(std::mem::take(&mut bools))),
            2 => Arc::new(Int64Array::from(std::mem::take(&mut ints))),
            _ => new_empty_array(f.data_type()),
        });
    }
    let internal = |e: ArrowError| Error::with_message_and_status(e.to_string(), Status::Internal);
    let union = UnionArray::try_new(fields, ScalarBuffer::from(type_ids), Some(ScalarBuffer::from(offsets)), children)
        .map_err(internal)?;
    RecordBatch::try_new(schema, vec![Arc::new(UInt32Array::from(names)), Arc::new(union)]).map_err(internal)
}

#[allow(clippy::too_many_arguments)]
fn objects_batch(
    catalogs: &[String],
    schema_matches: bool,
    want_schemas: bool,
    want_tables: bool,
    want_columns: bool,
    tables: &[(String, String, String)],
    columns: &[Vec<String>],
) -> Result<RecordBatch> {
    let schema = schemas::GET_OBJECTS_SCHEMA.clone();
    let db_schemas_dt = schema.field(1).data_type().clone(); // List(db schema struct)
    let db_schema_dt = match &db_schemas_dt {
        DataType::List(f) => f.data_type().clone(),
        _ => unreachable!(),
    };
    let tables_dt = field_type(&db_schema_dt, "db_schema_tables");
    let table_dt = match &tables_dt {
        DataType::List(f) => f.data_type().clone(),
        _ => unreachable!(),
    };
    let columns_dt = field_type(&table_dt, "table_columns");
    let column_dt = match &columns_dt {
        DataType::List(f) => f.data_type().clone(),
        _ => unreachable!(),
    };
    let constraints_dt = field_type(&table_dt, "table_constraints");
    let constraint_dt = match &constraints_dt {
        DataType::List(f) => f.data_type().clone(),
        _ => unreachable!(),
    };

    // Columns, in table order.
    let (mut c_name, mut c_pos, mut c_remarks, mut c_type, mut c_nullable, mut c_is_nullable, mut c_def) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut col_offsets = vec![0i32];
    let mut ci = 0;
    for (db, t, _) in tables {
        while ci < columns.len() && (&columns[ci][0], &columns[ci][1]) < (db, t) {
            ci += 1;
        }
        while ci < columns.len() && &columns[ci][0] == db && &columns[ci][1] == t {
            let r = &columns[ci];
            c_name.push(r[2].clone());
            c_pos.push(r[3].parse::<i32>().ok());
            c_remarks.push((!r[5].is_empty()).then(|| r[5].clone()));
            let nullable = r[4].starts_with("Nullable(") || r[4].starts_with("LowCardinality(Nullable(");
            c_type.push(Some(r[4].clone()));
            c_nullable.push(Some(i16::from(nullable)));
            c_is_nullable.push(Some(if nullable { "YES" } else { "NO" }.to_string()));
            c_def.push((!r[7].is_empty()).then(|| r[7].clone()));
            ci += 1;
        }
        col_offsets.push(c_name.len() as i32);
    }
    let n = c_name.len();
    let mut col_children: Vec<ArrayRef> = Vec::new();
    for f in fields_of(&column_dt).iter() {
        col_children.push(match f.name().as_str() {
            "column_name" => Arc::new(StringArray::from(std::mem::take(&mut c_name))),
            "ordinal_position" => Arc::new(Int32Array::from(std::mem::take(&mut c_pos))),
            "remarks" => Arc::new(StringArray::from(std::mem::take(&mut c_remarks))),
            "xdbc_type_name" => Arc::new(StringArray::from(std::mem::take(&mut c_type))),
            "xdbc_nullable" => Arc::new(Int16Array::from(std::mem::take(&mut c_nullable))),
            "xdbc_is_nullable" => Arc::new(StringArray::from(std::mem::take(&mut c_is_nullable))),
            "xdbc_column_def" => Arc::new(StringArray::from(std::mem::take(&mut c_def))),
            _ => arrow_array::new_null_array(f.data_type(), n),
        });
    }
    let column_structs = structs(&column_dt, col_children)?;
    let table_columns =
        list(&columns_dt, col_offsets, column_structs, (!want_columns).then(|| vec![false; tables.len()]))?;
    let table_constraints = list(
        &constraints_dt,
        vec![0; tables.len() + 1],
        new_empty_array(&constraint_dt),
        (!want_columns).then(|| vec![false; tables.len()]),
    )?;
    let table_structs = structs(
        &table_dt,
        vec![
            Arc::new(StringArray::from(tables.iter().map(|t| t.1.clone()).collect::<Vec<_>>())),
            Arc::new(StringArray::from(tables.iter().map(|t| t.2.clone()).collect::<Vec<_>>())),
            table_columns,
            table_constraints,
        ],
    )?;
    // One schema ("") per catalog that matched, holding that database's tables.
    let schemas_per_catalog = usize::from(schema_matches);
    let mut table_offsets = vec![0i32];
    let mut ti = 0;
    for db in catalogs {
        if schema_matches {
            while ti < tables.len() && &tables[ti].0 == db {
                ti += 1;
            }
            table_offsets.push(ti as i32);
        }
    }
    let n_schemas = catalogs.len() * schemas_per_catalog;
    let db_schema_tables =
        list(&tables_dt, table_offsets, table_structs, (!want_tables).then(|| vec![false; n_schemas]))?;
    let schema_structs =
        structs(&db_schema_dt, vec![Arc::new(StringArray::from(vec![Some(""); n_schemas])), db_schema_tables])?;
    let schema_offsets: Vec<i32> = (0..=catalogs.len()).map(|i| (i * schemas_per_catalog) as i32).collect();
    let catalog_db_schemas =
        list(&db_schemas_dt, schema_offsets, schema_structs, (!want_schemas).then(|| vec![false; catalogs.len()]))?;
    RecordBatch::try_new(schema, vec![Arc::new(StringArray::from(catalogs.to_vec())), catalog_db_schemas])
        .map_err(|e| Error::with_message_and_status(e.to_string(), Status::Internal))
}

#[cfg(test)]
mod tests {
    use super::like;

    #[test]
    fn like_patterns() {
        assert!(like("adbc_t1", "adbc\\_%"));
        assert!(!like("adbcxt1", "adbc\\_%"));
        assert!(like("", "%"));
        assert!(like("abc", "a_c"));
        assert!(!like("abcd", "a_c"));
    }
}
