use super::*;

fn topo(weights: &[u32]) -> Topology {
    weights.iter().enumerate().fold(Topology::new("t"), |t, (i, &w)| {
        t.shard(Shard::new([Replica::new("127.0.0.1", 9000 + i as u16)]).weight(w))
    })
}

#[test]
fn keys_map_to_shards_by_weight_ranges() {
    let t = topo(&[3, 4]);
    let got: Vec<usize> = (0..14).map(|k| t.shard_for(k).unwrap()).collect();
    assert_eq!(got, [0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1]);
    let t = topo(&[1, 0, 2]);
    let got: Vec<usize> = (0..6).map(|k| t.shard_for(k).unwrap()).collect();
    assert_eq!(got, [0, 2, 2, 0, 2, 2]);
    assert_eq!(topo(&[0, 0]).shard_for(5), None);
}

#[test]
fn errors_halve_per_whole_half_life_and_stop_at_the_cap() {
    let t0 = Instant::now();
    let hl = Duration::from_secs(60);
    let mut h = Health::new(t0);
    for _ in 0..8 {
        h.record(t0, hl, 1000);
    }
    assert_eq!(h.errors_at(t0 + Duration::from_secs(59), hl), 8);
    assert_eq!(h.errors_at(t0 + Duration::from_secs(60), hl), 4);
    assert_eq!(h.errors_at(t0 + Duration::from_secs(150), hl), 2);
    assert_eq!(h.errors_at(t0 + Duration::from_secs(180), hl), 1);
    assert_eq!(h.errors_at(t0 + Duration::from_secs(100_000), hl), 0);
    let mut h = Health::new(t0);
    for _ in 0..10 {
        h.record(t0, hl, 3);
    }
    assert_eq!(h.errors_at(t0, hl), 3);
}

#[test]
fn replicas_are_ordered_by_errors_then_policy() {
    let t = Topology::new("t").shard(Shard::new((0..3).map(|i| Replica::new("h", 9000 + i))));
    let c = Cluster::new(Config::new(), t).unwrap();
    assert_eq!(c.inner.order(0, Instant::now()), [0, 1, 2]);
    c.inner.record_error(0, 0);
    c.inner.record_error(0, 0);
    c.inner.record_error(0, 1);
    assert_eq!(c.inner.order(0, Instant::now()), [2, 1, 0]);
    let errs: Vec<(u16, u64)> = c.replica_errors(0).into_iter().map(|(r, e)| (r.port, e)).collect();
    assert_eq!(errs, [(9002, 0), (9001, 1), (9000, 2)]);
    // Two half-lives later: 2 -> 0 and 1 -> 0: back to the configured order.
    let later = Instant::now() + Duration::from_secs(121);
    assert_eq!(c.inner.order(0, later), [0, 1, 2]);
}

#[test]
fn located_errors_keep_their_kind_and_say_where() {
    let e = Error::timeout("reading").located("cluster `c` shard 2 (replica h:1)".into(), 1, Some("h:1".into()));
    assert_eq!(e.kind(), ErrorKind::Timeout);
    assert!(e.is_closed() && replica_fault(&e));
    assert_eq!((e.shard(), e.replica()), (Some(1), Some("h:1")));
    assert_eq!(e.to_string(), "cluster `c` shard 2 (replica h:1): timed out reading");
    assert_eq!(e.unlocated().shard(), None);
    let e = Error::invalid_input("bad").located("x".into(), 0, None);
    assert!(!replica_fault(&e));
}

#[test]
fn bad_topologies_are_refused() {
    assert!(Cluster::new(Config::new(), Topology::new("e")).is_err());
    let t = Topology::new("e").shard(Shard::new([]));
    let e = Cluster::new(Config::new(), t).unwrap_err();
    assert!(e.to_string().contains("shard 1 of cluster `e` has no replicas"), "{e}");
}
