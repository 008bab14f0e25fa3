// Command scriptorium-example searches a running Scriptorium daemon and fetches the top result.
//
//	scriptorium-example [-target HOST:PORT] [-top-k N] QUERY
//	scriptorium-example [-target HOST:PORT] -get LOCATION
//
// It checks health first, prints the ranked results, then fetches the best one by ref_id; with
// -get it fetches one location in full. A failed fetch prints the Resolution the server attached
// to the status (why it failed, and the candidates when the location is ambiguous).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"

	pb "scriptorium-example/scriptoriumv1"
)

func defaultTarget() string {
	if target := os.Getenv("SCRIPTORIUM_TARGET"); target != "" {
		return target
	}
	return "127.0.0.1:50051"
}

// explain prints the gRPC status and any Resolution detail of a failed call.
func explain(err error) {
	st := status.Convert(err)
	fmt.Fprintf(os.Stderr, "%s: %s\n", st.Code(), st.Message())
	for _, detail := range st.Details() {
		if res, ok := detail.(*pb.Resolution); ok {
			fmt.Fprintf(os.Stderr, "  resolution: %s (rule %s)\n", res.GetReason(), res.GetRule())
			for _, candidate := range res.GetCandidates() {
				fmt.Fprintf(os.Stderr, "  candidate: %s\n", candidate)
			}
		}
	}
}

func main() {
	target := flag.String("target", defaultTarget(), "daemon address")
	topK := flag.Int("top-k", 5, "number of results")
	get := flag.String("get", "", "fetch this location in full instead of searching")
	flag.Parse()
	query := strings.Join(flag.Args(), " ")
	if query == "" && *get == "" {
		fmt.Fprintln(os.Stderr, "usage: scriptorium-example [-target HOST:PORT] QUERY | -get LOCATION")
		os.Exit(2)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := grpc.DialContext(ctx, *target, grpc.WithInsecure(), grpc.WithBlock())
	if err != nil {
		fmt.Fprintf(os.Stderr, "cannot reach %s: %v\n", *target, err)
		os.Exit(2)
	}
	defer conn.Close()

	health, err := grpc_health_v1.NewHealthClient(conn).Check(
		ctx, &grpc_health_v1.HealthCheckRequest{})
	if err != nil {
		explain(err)
		os.Exit(2)
	}
	fmt.Printf("health: %s\n", health.GetStatus())

	client := pb.NewRetrievalServiceClient(conn)
	if *get != "" {
		page, err := client.GetContent(ctx, &pb.GetContentRequest{
			Location: *get, Mode: pb.ContentMode_CONTENT_MODE_FULL})
		if err != nil {
			explain(err)
			os.Exit(1)
		}
		fmt.Printf("%s (resolved by %s)\n%s\n", page.GetLocation(), page.GetResolution().GetRule(),
			page.GetContent())
		return
	}

	found, err := client.Search(ctx, &pb.SearchRequest{Query: query, TopK: int32(*topK)})
	if err != nil {
		explain(err)
		os.Exit(1)
	}
	for i, r := range found.GetResults() {
		fmt.Printf("%d. %s  [%s, score %.3f]\n   %s\n", i+1, r.GetLocation(), r.GetSource(),
			r.GetScore(), r.GetPreview())
	}
	if len(found.GetResults()) == 0 {
		fmt.Println("no results")
		return
	}

	top := found.GetResults()[0]
	content, err := client.GetContent(ctx, &pb.GetContentRequest{
		RefId: top.GetRefId(), Mode: pb.ContentMode_CONTENT_MODE_SNIPPET})
	if err != nil {
		explain(err)
		os.Exit(1)
	}
	fmt.Printf("\n%s (lines %d-%d of %d)\n%s\n", content.GetLocation(), content.GetStartLine(),
		content.GetEndLine(), content.GetTotalLines(), content.GetContent())
}
