package demo

import "math"

func sqrt64(x float64) float64 { return math.Sqrt(x) }
func log64(x float64) float64  { return math.Log(x) }
func cos64(x float64) float64  { return math.Cos(x) }

func exp32(x float32) float32  { return float32(math.Exp(float64(x))) }
func log32(x float32) float32  { return float32(math.Log(float64(x))) }
func sqrt32(x float32) float32 { return float32(math.Sqrt(float64(x))) }
func tanh32(x float32) float32 { return float32(math.Tanh(float64(x))) }

var negInf32 = float32(math.Inf(-1))
