//! Protocol revisions that change bytes on the wire (`src/Core/ProtocolDefines.h`).
//!
//! Every gated field is written or read only when `min(ours, server's)` reaches its
//! constant. Names drop the `DBMS_MIN_(REVISION|PROTOCOL_VERSION)_WITH_` prefix.

#![allow(missing_docs)]

pub const CLIENT_INFO: u64 = 54032;
pub const SERVER_TIMEZONE: u64 = 54058;
pub const QUOTA_KEY_IN_CLIENT_INFO: u64 = 54060;
pub const SERVER_DISPLAY_NAME: u64 = 54372;
pub const VERSION_PATCH: u64 = 54401;
pub const CLIENT_WRITE_INFO: u64 = 54420;
pub const SETTINGS_SERIALIZED_AS_STRINGS: u64 = 54429;
pub const INTERSERVER_SECRET: u64 = 54441;
pub const OPENTELEMETRY: u64 = 54442;
pub const DISTRIBUTED_DEPTH: u64 = 54448;
pub const INITIAL_QUERY_START_TIME: u64 = 54449;
pub const PARALLEL_REPLICAS: u64 = 54453;
pub const CUSTOM_SERIALIZATION: u64 = 54454;
pub const ADDENDUM: u64 = 54458;
pub const PARAMETERS: u64 = 54459;
pub const SERVER_QUERY_TIME_IN_PROGRESS: u64 = 54460;
pub const PASSWORD_COMPLEXITY_RULES: u64 = 54461;
pub const INTERSERVER_SECRET_V2: u64 = 54462;
pub const TOTAL_BYTES_IN_PROGRESS: u64 = 54463;
pub const TIMEZONE_UPDATES: u64 = 54464;
pub const SPARSE_SERIALIZATION: u64 = 54465;
pub const TABLE_READ_ONLY_CHECK: u64 = 54467;
pub const ROWS_BEFORE_AGGREGATION: u64 = 54469;
pub const CHUNKED_PACKETS: u64 = 54470;
pub const VERSIONED_PARALLEL_REPLICAS_PROTOCOL: u64 = 54471;
pub const INTERSERVER_EXTERNALLY_GRANTED_ROLES: u64 = 54472;
pub const V2_DYNAMIC_AND_JSON_SERIALIZATION: u64 = 54473;
pub const SERVER_SETTINGS: u64 = 54474;
pub const QUERY_AND_LINE_NUMBERS: u64 = 54475;
pub const JWT_IN_INTERSERVER: u64 = 54476;
pub const QUERY_PLAN_SERIALIZATION: u64 = 54477;
pub const VERSIONED_CLUSTER_FUNCTION_PROTOCOL: u64 = 54479;
pub const OUT_OF_ORDER_BUCKETS_IN_AGGREGATION: u64 = 54480;
pub const COMPRESSED_LOGS_PROFILE_EVENTS_COLUMNS: u64 = 54481;
pub const REPLICATED_SERIALIZATION: u64 = 54482;
pub const NULLABLE_SPARSE_SERIALIZATION: u64 = 54483;
pub const PROGRESS_IN_ASYNC_INSERT: u64 = 54484;
pub const CLIENT_AGENT_IN_CLIENT_INFO: u64 = 54485;
pub const INTERNAL_QUERY_FLAG: u64 = 54486;
pub const INTERSERVER_CURRENT_ROLES: u64 = 54488;
pub const HTTP_HANDLER_IN_CLIENT_INFO: u64 = 54490;
pub const STRING_WITH_SIZE_STREAM: u64 = 54492;

/// The revision chnative announces unless configured otherwise.
pub const DEFAULT: u64 = 54492;
/// The oldest revision chnative will speak (settings as strings, parameters).
pub const MIN_SUPPORTED: u64 = PARAMETERS;
/// Parallel-replicas protocol version sent in the Addendum.
pub const PARALLEL_REPLICAS_PROTOCOL_VERSION: u64 = 8;
