package coordrpc

import (
	"context"
	"sort"

	"google.golang.org/grpc"

	coordv1 "github.com/strata-db/strata/internal/rpcpb/strata/coord/v1"
)

// PinReports takes the WAL pins of reader nodes (wal.RemotePins).
type PinReports interface {
	Report(node int64, pins map[string]int64)
}

// WALPinServer serves WALPinService from the coordinator's remote pins.
type WALPinServer struct {
	coordv1.UnimplementedWALPinServiceServer
	pins PinReports
}

// NewWALPinServer returns a server over pins.
func NewWALPinServer(pins PinReports) *WALPinServer {
	return &WALPinServer{pins: pins}
}

// ReportPins implements WALPinService.ReportPins.
func (s *WALPinServer) ReportPins(_ context.Context, req *coordv1.ReportPinsRequest) (*coordv1.ReportPinsResponse, error) {
	pins := make(map[string]int64, len(req.GetPins()))
	for _, p := range req.GetPins() {
		if cur, ok := pins[p.GetPchannel()]; !ok || p.GetOffset() < cur {
			pins[p.GetPchannel()] = p.GetOffset()
		}
	}
	s.pins.Report(req.GetNodeId(), pins)
	return &coordv1.ReportPinsResponse{}, nil
}

// WALPins reports a node's WAL pins to the coordinator.
type WALPins struct{ c coordv1.WALPinServiceClient }

// NewWALPins returns a WALPinService client over conn.
func NewWALPins(conn grpc.ClientConnInterface) *WALPins {
	return &WALPins{c: coordv1.NewWALPinServiceClient(conn)}
}

// Report replaces node's pins at the coordinator: per pchannel, the lowest
// offset it still needs.
func (w *WALPins) Report(ctx context.Context, node int64, pins map[string]int64) error {
	req := &coordv1.ReportPinsRequest{NodeId: node}
	for ch, off := range pins {
		req.Pins = append(req.Pins, &coordv1.WALPin{Pchannel: ch, Offset: off})
	}
	sort.Slice(req.Pins, func(i, j int) bool { return req.Pins[i].GetPchannel() < req.Pins[j].GetPchannel() })
	_, err := w.c.ReportPins(ctx, req)
	return err
}
