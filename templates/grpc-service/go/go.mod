module __GO_MODULE__

go 1.23

require (
	connectrpc.com/connect v1.18.1
	golang.org/x/net v0.38.0
	google.golang.org/protobuf v1.36.6
)
