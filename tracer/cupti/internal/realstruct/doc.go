// Package realstruct is built only with the cupti tag (see realstruct.go).
package realstruct
