package main

import "net"

// freePorts returns n distinct free TCP ports on 127.0.0.1. All listeners stay
// open until every port is chosen, so the kernel cannot hand out one twice; a
// port can still be taken by another program before its user binds it.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		defer l.Close()
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
