package app

import "errors"

func newQueryNodeRole(nodeDeps) (nodeComponent, error) { return nil, errors.New("tmp") }
func newDataNodeRole(nodeDeps) (nodeComponent, error)  { return nil, errors.New("tmp") }
