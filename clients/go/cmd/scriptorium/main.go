// Command scriptorium is a small command line over the Go client.
//
//	scriptorium [-target HOST:PORT] health
//	scriptorium [-target HOST:PORT] search [-top-k N] [-kind docs|code] QUERY...
//	scriptorium [-target HOST:PORT] get [-mode snippet|full|multi_range|definition|outline] LOCATION|-ref REF_ID
//	scriptorium [-target HOST:PORT] canon -query QUERY -missing LOCATION
//
// A failed fetch prints the gRPC code and the Resolution the daemon attached (reason, rule and,
// for an ambiguous location, the candidates). canon prints one JSON object (the proto JSON
// mapping, proto field names, defaults included) of a code search (top 5), a full fetch of its
// first result by ref_id and a fetch of a missing location: what the cross-client test
// (tests/e2e/test_clients_agree.py) compares between clients.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	scriptorium "scriptorium/clients/go"
	pb "scriptorium/clients/go/scriptoriumv1"
)

var canonJSON = protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}

func main() {
	global := flag.NewFlagSet("scriptorium", flag.ExitOnError)
	target := global.String("target", scriptorium.DefaultTarget(), "daemon address")
	_ = global.Parse(os.Args[1:])
	if global.NArg() == 0 {
		usage()
	}
	client, err := scriptorium.New(*target)
	if err != nil {
		fail(err)
	}
	defer client.Close()
	ctx := context.Background()
	command, args := global.Arg(0), global.Args()[1:]
	switch command {
	case "health":
		err = health(ctx, client)
	case "search":
		err = search(ctx, client, args)
	case "get":
		err = get(ctx, client, args)
	case "canon":
		err = canon(ctx, client, args)
	default:
		usage()
	}
	if err != nil {
		fail(err)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: scriptorium [-target HOST:PORT] health|search|get|canon ...")
	os.Exit(2)
}

// fail prints a failed call (with its Resolution) or any other error, and exits non-zero.
func fail(err error) {
	if e, ok := scriptorium.AsError(err); ok {
		fmt.Fprintf(os.Stderr, "%s: %s\n", e.Code, e.Message)
		if res := e.Resolution; res != nil {
			fmt.Fprintf(os.Stderr, "  resolution: %s (rule %s)\n", res.GetReason(), res.GetRule())
			for _, candidate := range res.GetCandidates() {
				fmt.Fprintf(os.Stderr, "  candidate: %s\n", candidate)
			}
		}
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, err)
	os.Exit(2)
}

func health(ctx context.Context, client *scriptorium.Client) error {
	status, err := client.Health(ctx, "")
	if err == nil {
		fmt.Println(status)
	}
	return err
}

func search(ctx context.Context, client *scriptorium.Client, args []string) error {
	flags := flag.NewFlagSet("search", flag.ExitOnError)
	topK := flags.Int("top-k", 5, "number of results")
	kind := flags.String("kind", "", "docs or code (default both)")
	_ = flags.Parse(args)
	req := &pb.SearchRequest{Query: strings.Join(flags.Args(), " "), TopK: int32(*topK)}
	if *kind != "" {
		corpus, ok := pb.Corpus_value["CORPUS_"+strings.ToUpper(*kind)]
		if !ok {
			return fmt.Errorf("unknown kind %q: use docs or code", *kind)
		}
		req.Kinds = []pb.Corpus{pb.Corpus(corpus)}
	}
	found, err := client.Search(ctx, req)
	if err != nil {
		return err
	}
	for i, r := range found.GetResults() {
		fmt.Printf("%d. %s  [%s, score %.3f]\n   %s\n", i+1, r.GetLocation(), r.GetSource(),
			r.GetScore(), r.GetPreview())
	}
	if len(found.GetResults()) == 0 {
		fmt.Println("no results")
	}
	return nil
}

func get(ctx context.Context, client *scriptorium.Client, args []string) error {
	flags := flag.NewFlagSet("get", flag.ExitOnError)
	ref := flags.String("ref", "", "a ref_id from a search")
	mode := flags.String("mode", "full", "snippet, full, multi_range, definition or outline")
	_ = flags.Parse(args)
	value, ok := pb.ContentMode_value["CONTENT_MODE_"+strings.ToUpper(*mode)]
	if !ok {
		return fmt.Errorf("unknown mode %q: use snippet, full, multi_range, definition or outline", *mode)
	}
	req := &pb.GetContentRequest{RefId: *ref, Location: strings.Join(flags.Args(), " "),
		Mode: pb.ContentMode(value)}
	if (req.RefId == "") == (req.Location == "") {
		return errors.New("give a LOCATION or -ref REF_ID")
	}
	page, err := client.GetContent(ctx, req)
	if err != nil {
		return err
	}
	fmt.Printf("%s (lines %d-%d of %d, resolved by %s)\n%s\n", page.GetLocation(),
		page.GetStartLine(), page.GetEndLine(), page.GetTotalLines(),
		page.GetResolution().GetRule(), page.GetContent())
	return nil
}

// canon prints the JSON the cross-client test compares.
func canon(ctx context.Context, client *scriptorium.Client, args []string) error {
	flags := flag.NewFlagSet("canon", flag.ExitOnError)
	query := flags.String("query", "", "what to search for")
	missing := flags.String("missing", "", "a location that names nothing")
	_ = flags.Parse(args)
	found, err := client.Search(ctx, &pb.SearchRequest{
		Query: *query, TopK: 5, Kinds: []pb.Corpus{pb.Corpus_CORPUS_CODE}})
	if err != nil {
		return err
	}
	if len(found.GetResults()) == 0 {
		return fmt.Errorf("no results for %q", *query)
	}
	content, err := client.GetByRef(ctx, found.GetResults()[0].GetRefId(),
		pb.ContentMode_CONTENT_MODE_FULL)
	if err != nil {
		return err
	}
	_, err = client.GetByLocation(ctx, *missing, pb.ContentMode_CONTENT_MODE_FULL)
	failed, ok := scriptorium.AsError(err)
	if !ok {
		return fmt.Errorf("fetching %q: want a failed call, got %v", *missing, err)
	}
	out := map[string]any{
		"search":  raw(found),
		"content": raw(content),
		"missing": map[string]any{"code": int(failed.Code), "resolution": raw(failed.Resolution)},
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}

func raw(message proto.Message) json.RawMessage {
	data, err := canonJSON.Marshal(message)
	if err != nil {
		panic(err)
	}
	return data
}
