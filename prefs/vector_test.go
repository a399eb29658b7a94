package prefs

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDot(t *testing.T) {
	tests := []struct {
		name string
		a, b []float32
		want float32
	}{
		{"empty", nil, nil, 0},
		{"one", []float32{3}, []float32{-2}, -6},
		{"not a multiple of four", []float32{1, 2, 3, 4, 5}, []float32{5, 4, 3, 2, 1}, 35},
		{"orthogonal", []float32{1, 0, 0, 0}, []float32{0, 1, 0, 0}, 0},
		{"lengths differ", []float32{1, 2}, []float32{1, 2, 3}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Dot(tt.a, tt.b); got != tt.want {
				t.Errorf("Dot = %v, want %v", got, tt.want)
			}
			if got := Dot(tt.b, tt.a); got != tt.want {
				t.Errorf("Dot reversed = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestNormalize(t *testing.T) {
	v := []float32{3, 4}
	got := Normalize(v)
	if diff := cmp.Diff([]float32{0.6, 0.8}, got); diff != "" {
		t.Errorf("Normalize (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]float32{3, 4}, v); diff != "" {
		t.Errorf("Normalize changed its input (-want +got):\n%s", diff)
	}
	if got := Normalize([]float32{0, 0}); !cmp.Equal(got, []float32{0, 0}) {
		t.Errorf("Normalize(zero) = %v, want zeros", got)
	}
	if got := Norm(Normalize([]float32{1, 2, 3, 4, 5, 6, 7})); math.Abs(float64(got)-1) > 1e-6 {
		t.Errorf("norm of a normalised vector = %v, want 1", got)
	}
}

func TestCosine(t *testing.T) {
	tests := []struct {
		name string
		a, b []float32
		want float64
	}{
		{"same direction, other lengths", []float32{1, 1}, []float32{3, 3}, 1},
		{"opposite", []float32{1, 2}, []float32{-2, -4}, -1},
		{"orthogonal", []float32{1, 0}, []float32{0, 5}, 0},
		{"sixty degrees", []float32{1, 0}, []float32{0.5, float32(math.Sqrt(3) / 2)}, 0.5},
		{"zero vector", []float32{0, 0}, []float32{1, 0}, 0},
		{"lengths differ", []float32{1, 0}, []float32{1, 0, 0}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Cosine(tt.a, tt.b); math.Abs(float64(got)-tt.want) > 1e-6 {
				t.Errorf("Cosine = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCosineDistance(t *testing.T) {
	a, b := angles(0, 60)[0], angles(0, 60)[1]
	if got := CosineDistance(a, b); math.Abs(float64(got)-0.5) > 1e-6 {
		t.Errorf("CosineDistance at 60 degrees = %v, want 0.5", got)
	}
	if got := CosineDistance(a, a); math.Abs(float64(got)) > 1e-6 {
		t.Errorf("CosineDistance to itself = %v, want 0", got)
	}
	c := angles(180)[0]
	if got := CosineDistance(a, c); math.Abs(float64(got)-2) > 1e-6 {
		t.Errorf("CosineDistance to the opposite = %v, want 2", got)
	}
}
