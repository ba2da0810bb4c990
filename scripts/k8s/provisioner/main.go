// Command sandboxd-test-provisioner provisions the test cluster's volumes with a hard size
// limit, as a block-backed class does on a real cluster: each PersistentVolume is an ext4
// filesystem image of its claim's size (sparse, so the host's disk gives blocks only as they
// are written), loop-mounted under --root and offered as a `local` volume of this one node. A
// writer past the size gets ENOSPC, and the kubelet reports a local volume's use from its
// filesystem, which is the volume's own. For the test cluster only: scripts/k8s-up.sh builds
// and starts it, and its StorageClass names it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/sig-storage-lib-external-provisioner/v13/controller"
)

// The suffix of a volume's filesystem image beside its mount point.
const imageSuffix = ".img"

type loopImages struct {
	root string
	node string
}

func (l *loopImages) paths(pv string) (image, mountPoint string) {
	return filepath.Join(l.root, pv+imageSuffix), filepath.Join(l.root, pv)
}

// Provision makes the claim's filesystem and its PersistentVolume. A try cut short is made
// again from the start: what an earlier try left is removed first.
func (l *loopImages) Provision(ctx context.Context, options controller.ProvisionOptions) (*v1.PersistentVolume, controller.ProvisioningState, error) {
	size, ok := options.PVC.Spec.Resources.Requests[v1.ResourceStorage]
	if !ok || size.Value() <= 0 {
		return nil, controller.ProvisioningFinished, fmt.Errorf("claim %s/%s asks for no storage size", options.PVC.Namespace, options.PVC.Name)
	}
	image, mountPoint := l.paths(options.PVName)
	if err := l.remove(image, mountPoint); err != nil {
		return nil, controller.ProvisioningFinished, err
	}
	if err := makeFilesystem(ctx, image, mountPoint, size.Value()); err != nil {
		return nil, controller.ProvisioningFinished, err
	}
	reclaim := v1.PersistentVolumeReclaimDelete
	if options.StorageClass.ReclaimPolicy != nil {
		reclaim = *options.StorageClass.ReclaimPolicy
	}
	filesystem := v1.PersistentVolumeFilesystem
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: options.PVName},
		Spec: v1.PersistentVolumeSpec{
			PersistentVolumeReclaimPolicy: reclaim,
			AccessModes:                   options.PVC.Spec.AccessModes,
			Capacity:                      v1.ResourceList{v1.ResourceStorage: size},
			VolumeMode:                    &filesystem,
			MountOptions:                  options.StorageClass.MountOptions,
			PersistentVolumeSource: v1.PersistentVolumeSource{
				Local: &v1.LocalVolumeSource{Path: mountPoint},
			},
			NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{
				NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{
					Key:      v1.LabelHostname,
					Operator: v1.NodeSelectorOpIn,
					Values:   []string{l.node},
				}}}},
			}},
		},
	}, controller.ProvisioningFinished, nil
}

// Delete removes the volume's filesystem once its claim is gone.
func (l *loopImages) Delete(_ context.Context, pv *v1.PersistentVolume) error {
	image, mountPoint := l.paths(pv.Name)
	return l.remove(image, mountPoint)
}

// remove unmounts and deletes a volume's filesystem, when there is one.
func (l *loopImages) remove(image, mountPoint string) error {
	if mounted(mountPoint) {
		if err := syscall.Unmount(mountPoint, 0); err != nil {
			return fmt.Errorf("unmount %s: %w", mountPoint, err)
		}
	}
	if err := os.Remove(mountPoint); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", mountPoint, err)
	}
	if err := os.Remove(image); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", image, err)
	}
	return nil
}

// makeFilesystem makes a sparse image of size bytes, an ext4 filesystem on it with no blocks
// reserved for root, and mounts it at mountPoint without its lost+found (root's, of no use to
// the sandbox).
func makeFilesystem(ctx context.Context, image, mountPoint string, size int64) error {
	file, err := os.OpenFile(image, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("make %s: %w", image, err)
	}
	err = file.Truncate(size)
	if closeErr := file.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return fmt.Errorf("size %s: %w", image, err)
	}
	if err := run(ctx, "mkfs.ext4", "-q", "-F", "-m", "0", "-L", "sandboxd-test", image); err != nil {
		return err
	}
	if err := os.Mkdir(mountPoint, 0o700); err != nil {
		return fmt.Errorf("make %s: %w", mountPoint, err)
	}
	if err := mount(ctx, image, mountPoint); err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(mountPoint, "lost+found")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove lost+found of %s: %w", image, err)
	}
	return nil
}

func mount(ctx context.Context, image, mountPoint string) error {
	return run(ctx, "mount", "-t", "ext4", "-o", "loop,nosuid,nodev", image, mountPoint)
}

// mounted says whether path is a mount point, from the kernel's table of this namespace.
func mounted(path string) bool {
	table, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(table), "\n") {
		// Field 5 is the mount point, with spaces and the like escaped (none in our paths).
		fields := strings.Fields(line)
		if len(fields) > 4 && fields[4] == path {
			return true
		}
	}
	return false
}

func run(ctx context.Context, program string, args ...string) error {
	out, err := exec.CommandContext(ctx, program, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w: %s", program, strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

// remountAll mounts again the images whose mounts a reboot took, so the volumes' data is
// where their PersistentVolumes say.
func (l *loopImages) remountAll(ctx context.Context) error {
	images, err := filepath.Glob(filepath.Join(l.root, "*"+imageSuffix))
	if err != nil {
		return err
	}
	for _, image := range images {
		mountPoint := strings.TrimSuffix(image, imageSuffix)
		if mounted(mountPoint) {
			continue
		}
		if err := os.MkdirAll(mountPoint, 0o700); err != nil {
			return err
		}
		if err := mount(ctx, image, mountPoint); err != nil {
			return err
		}
	}
	return nil
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "the kubeconfig to reach the API server with")
	name := flag.String("name", "sandboxd.test/loop-image", "the provisioner's name, as StorageClasses name it")
	root := flag.String("root", "", "the directory that holds the volumes' images and mount points")
	node := flag.String("node", "", "the node whose local volumes these are")
	klog.InitFlags(nil)
	flag.Parse()
	if *kubeconfig == "" || *root == "" || *node == "" {
		klog.Exit("--kubeconfig, --root and --node are needed")
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		klog.Exitf("kubeconfig %s: %v", *kubeconfig, err)
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		klog.Exitf("client: %v", err)
	}
	if err := os.MkdirAll(*root, 0o700); err != nil {
		klog.Exitf("root %s: %v", *root, err)
	}
	images := &loopImages{root: *root, node: *node}
	if err := images.remountAll(ctx); err != nil {
		klog.Exitf("mounting the volumes again: %v", err)
	}
	controller.NewProvisionController(ctx, client, *name, images,
		controller.LeaderElection(false),
	).Run(ctx)
}
