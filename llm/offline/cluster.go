package offline

import (
	"context"
	"fmt"
	"strings"

	"github.com/memento-ai/memento"
)

// maxListed bounds how many concepts a cluster description names on each
// side; the rest are counted.
const maxListed = 5

// DescribeCluster names a cluster's direction from its members' signs:
// "prefers heist films and crime thrillers; dislikes slasher horror". Each
// member supports the direction when its weight is positive or zero and
// opposes it when negative, in the order given.
func (m *Model) DescribeCluster(ctx context.Context, members []memento.ClusterMember) (*memento.ClusterDescription, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("describe cluster: %w", err)
	}
	d := &memento.ClusterDescription{Stances: make([]string, len(members))}
	var likes, dislikes []string
	for i, mem := range members {
		c := strings.Join(strings.Fields(mem.Concept), " ")
		if mem.Weight < 0 {
			d.Stances[i] = "oppose"
			dislikes = appendNew(dislikes, c)
		} else {
			d.Stances[i] = "support"
			likes = appendNew(likes, c)
		}
	}
	var parts []string
	if s := listConcepts(likes); s != "" {
		parts = append(parts, "prefers "+s)
	}
	if s := listConcepts(dislikes); s != "" {
		parts = append(parts, "dislikes "+s)
	}
	d.Description = strings.Join(parts, "; ")
	return d, nil
}

// listConcepts joins up to maxListed concepts and counts the rest.
func listConcepts(cs []string) string {
	var kept []string
	for _, c := range cs {
		if c != "" {
			kept = append(kept, c)
		}
	}
	if len(kept) > maxListed {
		more := len(kept) - maxListed
		kept = append(kept[:maxListed], fmt.Sprintf("%d more", more))
	}
	return joinList(kept, "and")
}
