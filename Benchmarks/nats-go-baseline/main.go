// nats-go-baseline: herald-bench's NATS baseline, the same JetStream workloads through the
// official Go client (nats.go), against the server herald-bench started.
//
// Built by herald-bench offline from Debian's packages (golang-go, golang-github-nats-io-go-nats-dev):
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go build -o .build/nats-go-baseline/nats-go-baseline ./Benchmarks/nats-go-baseline
//
// Usage: nats-go-baseline -server URL -workload publish|consume -n N [-window 256] [-payload 128]
//
// It creates a file-stored stream of its own, runs the workload, checks every ack (and that the
// stream or the consumer holds what it should), deletes the stream, and prints one line of JSON:
// {"rate": messages per second, "cpu": CPU seconds (user + system, getrusage) of this process
// during the timed part}.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/nats-io/nats.go"
)

func cpuSeconds() float64 {
	var usage syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &usage); err != nil {
		return 0
	}
	seconds := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return seconds(usage.Utime) + seconds(usage.Stime)
}

func fail(format string, arguments ...interface{}) {
	fmt.Fprintf(os.Stderr, "nats-go-baseline: "+format+"\n", arguments...)
	os.Exit(1)
}

func main() {
	server := flag.String("server", nats.DefaultURL, "the server's URL")
	workload := flag.String("workload", "publish", "publish or consume")
	n := flag.Int("n", 10000, "messages")
	window := flag.Int("window", 256, "publishes in flight; messages per fetch")
	size := flag.Int("payload", 128, "payload bytes")
	flag.Parse()

	connection, err := nats.Connect(*server, nats.Name("nats-go-baseline"))
	if err != nil {
		fail("connect: %v", err)
	}
	defer connection.Close()
	js, err := connection.JetStream(nats.PublishAsyncMaxPending(*window), nats.MaxWait(60*time.Second))
	if err != nil {
		fail("jetstream: %v", err)
	}
	stream := fmt.Sprintf("GOBASE%d", os.Getpid())
	subject := fmt.Sprintf("gobase.%d.event", os.Getpid())
	if _, err := js.AddStream(&nats.StreamConfig{Name: stream, Subjects: []string{subject}, Storage: nats.FileStorage}); err != nil {
		fail("add stream: %v", err)
	}
	defer js.DeleteStream(stream)
	payload := make([]byte, *size)
	for i := range payload {
		payload[i] = 'h'
	}

	var rate, cpu float64
	switch *workload {
	case "publish":
		rate, cpu = publish(js, subject, payload, *n)
		info, err := js.StreamInfo(stream)
		if err != nil {
			fail("stream info: %v", err)
		}
		if info.State.Msgs != uint64(*n) {
			fail("the stream holds %d of %d", info.State.Msgs, *n)
		}
	case "consume":
		// Not timed: fill the stream.
		publish(js, subject, payload, *n)
		rate, cpu = consume(connection, js, stream, subject, *n, *window)
		// The server applies acks in the consumer's own time: look again for up to 10 s.
		for attempt := 0; ; attempt++ {
			info, err := js.ConsumerInfo(stream, "bench")
			if err != nil {
				fail("consumer info: %v", err)
			}
			if info.NumAckPending == 0 {
				break
			}
			if attempt == 200 {
				fail("%d acks missing", info.NumAckPending)
			}
			time.Sleep(50 * time.Millisecond)
		}
	default:
		fail("unknown workload %q", *workload)
	}
	out, _ := json.Marshal(map[string]float64{"rate": rate, "cpu": cpu})
	fmt.Println(string(out))
}

// publish: PublishAsync with a message id each, at most `window` in flight (the context's
// limit), then every future's ack checked.
func publish(js nats.JetStreamContext, subject string, payload []byte, n int) (float64, float64) {
	futures := make([]nats.PubAckFuture, 0, n)
	cpu := cpuSeconds()
	start := time.Now()
	for i := 0; i < n; i++ {
		future, err := js.PublishAsync(subject, payload, nats.MsgId(fmt.Sprintf("m%d", i)), nats.StallWait(60*time.Second))
		if err != nil {
			fail("publish %d: %v", i, err)
		}
		futures = append(futures, future)
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-time.After(60 * time.Second):
		fail("acks missing after 60 s")
	}
	for i, future := range futures {
		select {
		case ack := <-future.Ok():
			if ack.Duplicate {
				fail("publish %d: a duplicate", i)
			}
		case err := <-future.Err():
			fail("publish %d: %v", i, err)
		}
	}
	elapsed := time.Since(start)
	return float64(n) / elapsed.Seconds(), cpuSeconds() - cpu
}

// consume: a durable pull consumer, fetches of `window` (never more than remain), each
// message acked.
func consume(connection *nats.Conn, js nats.JetStreamContext, stream, subject string, n, window int) (float64, float64) {
	subscription, err := js.PullSubscribe(subject, "bench", nats.BindStream(stream), nats.AckExplicit(),
		nats.MaxAckPending(-1), nats.AckWait(60*time.Second))
	if err != nil {
		fail("pull subscribe: %v", err)
	}
	received := 0
	cpu := cpuSeconds()
	start := time.Now()
	for received < n {
		batch := window
		if n-received < batch {
			batch = n - received
		}
		messages, err := subscription.Fetch(batch, nats.MaxWait(5*time.Second))
		if err != nil {
			fail("fetch after %d: %v", received, err)
		}
		for _, message := range messages {
			if err := message.Ack(); err != nil {
				fail("ack: %v", err)
			}
		}
		received += len(messages)
	}
	// The acks are on the server (as Herald's side flushes too).
	if err := connection.Flush(); err != nil {
		fail("flush: %v", err)
	}
	elapsed := time.Since(start)
	return float64(n) / elapsed.Seconds(), cpuSeconds() - cpu
}
