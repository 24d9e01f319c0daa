//! Reading from the shards: one stream per shard, or one merged stream.

#[allow(unused_imports)]
use super::*;
/// A query running on one replica of one shard (see [`Cluster::shard_stream`]).
///
/// Until its first block is returned, a replica that fails (cannot be reached,
/// or drops the connection) counts an error and the query restarts on the next
/// replica; after that, a failure ends the stream with an error naming the
/// shard and replica (the rows already returned cannot be taken back, so the
/// stream does not silently restart). Dropping it cancels the query.
pub struct ShardStream {
    inner: Arc<Inner>,
    shard: usize,
    replica: usize,
    query: Query,
    stream: QueryStream<'static>,
    /// Replicas not tried yet (in order).
    rest: Vec<usize>,
    /// Failures before the current replica.
    failures: Vec<(usize, Error)>,
    delivered: bool,
}

impl std::fmt::Debug for ShardStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardStream").field("shard", &self.shard).field("replica", &self.replica()).finish()
    }
}

impl ShardStream {
    pub(super) async fn open(inner: Arc<Inner>, shard: usize, query: Query) -> Result<ShardStream> {
        let order = inner.checked_order(shard)?;
        let mut failures = Vec::new();
        let mut rest = order.into_iter();
        while let Some(i) = rest.next() {
            match start(&inner, shard, i, &query).await {
                Ok(stream) => {
                    return Ok(ShardStream {
                        inner,
                        shard,
                        replica: i,
                        query,
                        stream,
                        rest: rest.collect(),
                        failures,
                        delivered: false,
                    })
                }
                Err(e) if replica_fault(&e) => failures.push((i, e)),
                Err(e) => return Err(e),
            }
        }
        Err(inner.all_failed(shard, failures))
    }

    /// The shard's index in the topology.
    pub fn shard(&self) -> usize {
        self.shard
    }

    /// The replica (`host:port`) the query runs on now.
    pub fn replica(&self) -> &str {
        &self.inner.shards[self.shard][self.replica].address
    }

    /// The running query's id.
    pub fn query_id(&self) -> &str {
        self.stream.query_id()
    }

    /// A handle that cancels the query from elsewhere.
    pub fn cancel_handle(&self) -> CancelHandle {
        self.stream.cancel_handle()
    }

    /// The result's header (names and types), once received.
    pub fn header(&self) -> Option<&Block> {
        self.stream.header()
    }

    /// The next block with rows, or `None` at the end.
    pub async fn next(&mut self) -> Result<Option<&Block>> {
        loop {
            match self.stream.next().await.map(|b| b.is_some()) {
                Ok(true) => {
                    self.delivered = true;
                    return Ok(Some(self.stream.current()));
                }
                Ok(false) => return Ok(None),
                Err(e) => {
                    let fault = replica_fault(&e);
                    if fault {
                        self.inner.record_error(self.shard, self.replica);
                    }
                    let e = self.inner.locate(e, self.shard, Some(self.replica));
                    if !fault || self.delivered {
                        return Err(e);
                    }
                    self.failures.push((self.replica, e));
                    self.failover().await?;
                }
            }
        }
    }

    /// Restarts the query on the next replica that takes it.
    async fn failover(&mut self) -> Result<()> {
        while !self.rest.is_empty() {
            let i = self.rest.remove(0);
            match start(&self.inner, self.shard, i, &self.query).await {
                Ok(stream) => {
                    self.stream = stream;
                    self.replica = i;
                    return Ok(());
                }
                Err(e) if replica_fault(&e) => self.failures.push((i, e)),
                Err(e) => return Err(e),
            }
        }
        Err(self.inner.all_failed(self.shard, std::mem::take(&mut self.failures)))
    }
}

/// Starts `query` on replica `i` of `shard`; failures are counted and located.
async fn start(inner: &Arc<Inner>, shard: usize, i: usize, query: &Query) -> Result<QueryStream<'static>> {
    let client = inner.client(shard, i).await?;
    match client.fetch_blocks(query.clone()).await {
        Ok(s) => Ok(s),
        Err(e) => {
            if replica_fault(&e) {
                inner.record_error(shard, i);
            }
            Err(inner.locate(e, shard, Some(i)))
        }
    }
}

/// The blocks of every shard's result, merged (see [`Cluster::query_merged`]).
pub struct MergedStream {
    pub(super) rx: tokio::sync::mpsc::Receiver<Result<(usize, Block)>>,
    pub(super) tasks: tokio::task::JoinSet<()>,
    pub(super) done: bool,
}

impl std::fmt::Debug for MergedStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MergedStream").field("done", &self.done).finish()
    }
}

impl MergedStream {
    /// The next block and the index of the shard it came from, or `None` when
    /// every shard has finished. After an error the stream ends.
    pub async fn next(&mut self) -> Result<Option<(usize, Block)>> {
        if self.done {
            return Ok(None);
        }
        match self.rx.recv().await {
            Some(Ok(b)) => Ok(Some(b)),
            Some(Err(e)) => {
                self.done = true;
                self.tasks.abort_all();
                Err(e)
            }
            None => {
                self.done = true;
                // A task that panicked sent nothing: say so rather than end short.
                while let Some(r) = self.tasks.join_next().await {
                    if let Err(j) = r {
                        if j.is_panic() {
                            return Err(Error::internal(format!("a shard's read task panicked: {j}")));
                        }
                    }
                }
                Ok(None)
            }
        }
    }
}
