// Package placement decides where cluster work runs: which data node
// consumes each vchannel, and, for each loaded collection, which query
// nodes form each replica, which node leads each shard (vchannel) of a
// replica and which node serves each sealed segment. The decisions are
// pure functions over snapshots (the live nodes from membership, the
// channels and segments from the coordinators), so they are tested without
// a cluster; Store persists them in the meta store and the coordinator
// applies them.
//
// # Data nodes: channels
//
// AssignChannels keeps every channel whose owner is alive where it is:
// when a data node dies only its channels move, each to the live node
// owning the fewest channels. A node that joins takes nothing over by
// itself, only on an explicit rebalance (to within one channel of even)
// or once the most and least loaded nodes differ by more than
// ChannelPolicy.ImbalanceThreshold. A moved channel resumes from its
// channel checkpoint: Handoffs attaches the data coordinator's recovery
// information (checkpoint, seek offset, unflushed segments) to each move,
// which is exactly what a data node reads when it starts a vchannel, so no
// acknowledged row is lost (everything after the checkpoint is replayed
// from the WAL) and none is written twice (the replay skips what the old
// owner synced).
//
// # Query nodes: replicas, shard leaders, segments
//
// SpawnReplicas splits the live query nodes into replica_number replicas
// with distinct nodes, failing with Milvus's message
// ("failed to spawn replica for collection: resource group node not
// enough[rg=__default_resource_group][currentNodeNum=1][expectedNodeNum=2]")
// when there are fewer nodes than replicas. Assign gives each vchannel of a
// replica a shard leader (the node leading the fewest) and spreads the
// sealed segments over the replica's nodes by row count (largest first,
// each to the node with the fewest rows). Heal drops dead nodes and gives
// a replica left empty a free node; Assign then moves only the work of
// the dead nodes. Rebalance evens out the shard leaderships of healthy
// replicas (within one of each other per replica, the shard moved chosen
// by rows) and gives free nodes to replicas whose nodes each lead more
// than one shard; it returns the ShardMoves the query coordinator hands
// off one by one.
//
// # The loop
//
// ChannelBalancer applies the channel policy: it follows a membership
// watch of the data-node role, plans on every change, every Interval and
// every Rebalance request, saves the plan and hands each move over (with
// its checkpoint, its epoch and the nodes' addresses) to an apply
// function. A fenced save (the coordinator lost its term) stops it; other
// save errors are retried. A handoff apply fails is applied again on the
// next steps while the channel's record is still the one it delivers, and
// when the balancer starts it hands every live owner its channels again
// (ReasonResume): the coordinator before it may have died between saving a
// move and delivering it.
//
// # Moving a channel: handshake and fencing
//
// ChannelApplier.Apply is the apply function: for a balance move it first
// asks the live previous owner to release the channel (ReleaseChannel
// syncs what it buffered and returns once the data coordinator recorded
// it), then fences the data coordinator to the move's epoch
// (datacoord.Coordinator.Fence: from then on a sync report of an older
// epoch is refused and changes nothing), then asks the new owner to watch
// the channel under that epoch; the new owner reads the recovery
// information only then, so its checkpoint is not behind the old owner's
// last write. A dead owner's move skips the release: if that node still
// runs, its next report is refused and it stops the channel. Each step is
// idempotent (the transport retries; a failed move is applied again).
// Nodes are reached through a Dialer from the internal RPC address
// (datanoderpc.Client) or in process (datanode.Node).
//
// Every channel record carries an assignment epoch: 1 for the channel's
// first owner, one more on each change of owner (SaveChannels). The owner
// puts it in every sync report (catalog.SyncReport.Epoch).
//
// # Key layout
//
// Under the meta store (a fenced one in cluster mode, so only the current
// coordinator writes):
//
//	placement/channel/{vchannel}                   {"node":7,"epoch":3}: the data node that consumes the
//	                                               vchannel, and the assignment epoch of that ownership
//	                                               (absent in records written before epochs: 0)
//	placement/replica/{collectionID}/{replicaID}   JSON Replica: {"id":1,"nodes":[4,9],
//	                                               "leaders":{"by-dev-rootcoord-dml_0_449v0":4},
//	                                               "segments":{"4490001":9}}
//
// A channel record outlives its owner: while no data node is alive the
// record keeps naming the dead one (with its epoch), and the next plan
// moves the channel with reason "owner-dead". Field names are durable:
// add, never rename.
package placement
